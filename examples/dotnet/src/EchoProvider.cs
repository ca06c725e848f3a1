using System.Runtime.CompilerServices;

namespace SampleApp;

public static class EchoProvider
{
    // The uprobe target. Static, so the string arrives in the first argument
    // register (arg1); never inlined, so every request calls this body, and
    // published ReadyToRun, so the body is machine code inside SampleApp.dll.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string Echo(string text)
    {
        Tracing.Echo(text);
        return text;
    }
}
