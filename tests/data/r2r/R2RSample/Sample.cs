// Fixture for tests/unit/dotnet/test_r2r.c: every method named here is looked up
// by the test, so keep names and shapes in step with it.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace SampleApp
{
    public class EchoProvider
    {
        private int calls;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Echo(string text)
        {
            return "echo: " + text;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public string EchoInstance(string text)
        {
            calls++;
            return text + calls.ToString();
        }

        // Overloads: a lookup by name lists all three.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Add(int a, int b) { return a + b; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Add(long a, long b) { return a + b; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static double Add(double a, double b, double c) { return a + b + c; }

        // Exception handling gives this method funclets: several runtime
        // functions, one method.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Guarded(string s)
        {
            try
            {
                return int.Parse(s);
            }
            catch (FormatException)
            {
                return -1;
            }
            finally
            {
                Console.Write("");
            }
        }

        // ReadyToRun never precompiles AggressiveOptimization methods: this
        // one is in the metadata only, for the "no precompiled code" error.
        [MethodImpl(MethodImplOptions.AggressiveOptimization | MethodImplOptions.NoInlining)]
        public static int JitOnly(int x) { return x * 3; }

        public class Inner
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            public static int Depth(int n) { return n <= 0 ? 0 : 1 + Depth(n - 1); }

            public class Innermost
            {
                [MethodImpl(MethodImplOptions.NoInlining)]
                public int Twice(int n) { return 2 * n; }
            }
        }
    }

    public static class Generics
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static T Identity<T>(T value) { return value; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int UseIdentity()
        {
            // instantiations over a value type and over a reference type
            return Identity<int>(41) + Identity<string>("x").Length;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int CountAll(List<int> items)
        {
            int n = 0;
            foreach (int i in items)
                n += i;
            return n;
        }
    }

    public struct Point
    {
        public int X, Y;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public int Sum() { return X + Y; }
    }
}

namespace SampleApp.Deep.Names
{
    public class Fibonacci
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Compute(int pos)
        {
            return pos < 2 ? pos : Compute(pos - 1) + Compute(pos - 2);
        }
    }
}

namespace SampleApp
{
    public static class Program
    {
        // "spin READY_FILE": write our PID to READY_FILE, then run
        // precompiled code for at most 60 seconds (the test kills us sooner).
        public static int Main(string[] args)
        {
            if (args.Length != 2 || args[0] != "spin")
                return 2;
            // warm up first: the first calls go through the runtime's
            // fixup and binding stubs
            long sum = SampleApp.Deep.Names.Fibonacci.Compute(15);
            var until = DateTime.UtcNow.AddSeconds(60);
            System.IO.File.WriteAllText(args[1] + ".tmp", Environment.ProcessId.ToString());
            System.IO.File.Move(args[1] + ".tmp", args[1]);
            while (DateTime.UtcNow < until)
                sum += SampleApp.Deep.Names.Fibonacci.Compute(22);
            return sum == 42 ? 1 : 0;
        }
    }
}
