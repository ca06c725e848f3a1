using System.Runtime.InteropServices;

namespace SampleApp;

// LTTng events through the sample's own tracepoint provider
// (native/sampleapp_tp.c, loaded from libsampleapp-tp.so next to the app).
// Without that library, or without lttng-ust, the app runs untraced.
public static partial class Tracing
{
    private const string Lib = "sampleapp-tp";
    private static readonly bool Enabled = Probe();

    private static bool Probe()
    {
        if (Environment.GetEnvironmentVariable("SAMPLEAPP_LTTNG") == "0")
            return false;
        try
        {
            return NativeLibrary.TryLoad(Lib, typeof(Tracing).Assembly, null, out _);
        }
        catch (Exception)
        {
            return false;
        }
    }

    [LibraryImport(Lib, EntryPoint = "sampleapp_tp_request_start", StringMarshalling = StringMarshalling.Utf8)]
    private static partial void NativeRequestStart(string path);

    [LibraryImport(Lib, EntryPoint = "sampleapp_tp_request_stop", StringMarshalling = StringMarshalling.Utf8)]
    private static partial void NativeRequestStop(string path, int status);

    [LibraryImport(Lib, EntryPoint = "sampleapp_tp_echo", StringMarshalling = StringMarshalling.Utf8)]
    private static partial void NativeEcho(string text, int length);

    // True when the provider library loaded; calling it runs the static
    // constructor, which loads lttng-ust and registers with the daemon.
    public static bool Initialize() => Enabled;

    public static void RequestStart(string path)
    {
        if (Enabled)
            NativeRequestStart(path);
    }

    public static void RequestStop(string path, int status)
    {
        if (Enabled)
            NativeRequestStop(path, status);
    }

    public static void Echo(string text)
    {
        if (Enabled)
            NativeEcho(text, text.Length);
    }
}
