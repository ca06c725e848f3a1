using System.Runtime.CompilerServices;

namespace SampleApp;

public static class Fibonacci
{
    // Deliberately naive: exponential recursion keeps a CPU busy in one
    // managed method, which is what a CPU profile should show.
    // AggressiveOptimization keeps crossgen2 from precompiling it: the JIT
    // compiles it (fully optimized, at the first call), so it appears in the
    // runtime's perf map, which lists JIT-compiled code only; ReadyToRun
    // code is not in the perf map.
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static long Compute(int n)
    {
        if (n < 2)
            return n;
        return Compute(n - 1) + Compute(n - 2);
    }
}
