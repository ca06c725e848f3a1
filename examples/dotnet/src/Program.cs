// The sidescope sample: a small ASP.NET Core app with one CPU-heavy endpoint
// (for the profiler), one endpoint whose text goes through a named,
// never-inlined method (for uprobes), and LTTng events of its own.
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using SampleApp;

var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
var app = builder.Build();

// Load the tracepoint provider now, so that the app registers with an
// LTTng session daemon at start and not at its first request.
Tracing.Initialize();

app.Use(async (context, next) =>
{
    var path = context.Request.Path.Value ?? "";
    Tracing.RequestStart(path);
    try
    {
        await next(context);
    }
    finally
    {
        Tracing.RequestStop(path, context.Response.StatusCode);
    }
});

app.MapGet("/healthz", () => Results.Text("ok\n"));

app.MapGet("/api/fibonacci", (int? pos) =>
{
    int n = pos ?? 25;
    if (n < 0 || n > 45)
        return Results.BadRequest("pos must be between 0 and 45\n");
    return Results.Text(Fibonacci.Compute(n).ToString() + "\n");
});

app.MapGet("/api/echo", (string? echo) =>
{
    string text = EchoProvider.Echo(echo ?? "");
    return Results.Text(text, "text/plain; charset=utf-8");
});

// Tests and scripts wait for this file instead of polling the port: it
// holds the addresses the server listens on (port 0 picks a free one).
var readyFile = Environment.GetEnvironmentVariable("SAMPLEAPP_READY_FILE");
if (!string.IsNullOrEmpty(readyFile))
{
    app.Lifetime.ApplicationStarted.Register(() =>
    {
        var server = app.Services.GetRequiredService<IServer>();
        var addresses = server.Features.Get<IServerAddressesFeature>()?.Addresses;
        var tmp = readyFile + ".tmp";
        File.WriteAllText(tmp, string.Join("\n", addresses ?? []) + "\n");
        File.Move(tmp, readyFile, true);
    });
}

app.Run();
