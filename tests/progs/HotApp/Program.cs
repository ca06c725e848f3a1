// HotApp: a hot loop in two named methods on the main thread, for the
// profiler's tests of plain .NET processes and bench/jitnames.sh.
//   dotnet HotApp.dll [SECONDS] [READY_FILE]
// READY_FILE gets the process's PID once the loop runs.
using System;
using System.IO;
using System.Runtime.CompilerServices;

static class HotApp
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Work(int n)
    {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += i * 7 % 13;
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Outer(int n)
    {
        return Work(n) + 1;
    }

    static int Main(string[] args)
    {
        double secs = args.Length > 0 ? double.Parse(args[0]) : 10;
        DateTime end = DateTime.UtcNow.AddSeconds(secs);
        long x = Outer(1000), rounds = 0;
        if (args.Length > 1)
            File.WriteAllText(args[1], Environment.ProcessId + "\n");
        while (DateTime.UtcNow < end)
        {
            x += Outer(100000);
            rounds++;
        }
        // the sum, and how many rounds ran (bench/jitnames.sh's rate)
        Console.WriteLine(x + " " + rounds);
        return 0;
    }
}
