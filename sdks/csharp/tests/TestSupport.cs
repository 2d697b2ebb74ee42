// What the client test runners share: counted checks with the suite's summary line, and an
// HttpListener standing in for the API that records each call and answers from a function.
using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

/// <summary>Prints each failed check; Summary prints "suite: N passed, M failed" (run-tests.sh counts it).</summary>
sealed class Checks
{
    readonly string _suite;
    int _passed, _failed;

    public Checks(string suite) { _suite = suite; }

    public void Check(bool ok, string name, string detail = null)
    {
        lock (this)
        {
            if (ok) { _passed++; return; }
            _failed++;
            Console.WriteLine("FAIL " + name + (detail == null ? "" : ": " + detail));
        }
    }

    /// <summary>Prints the summary; answers the exit status (non-zero on a failure or no check at all).</summary>
    public int Summary()
    {
        Console.WriteLine(_suite + ": " + _passed + " passed, " + _failed + " failed");
        return _failed == 0 && _passed > 0 ? 0 : 1;
    }
}

static class Ports
{
    /// <summary>A loopback port nothing listens on (taken and released): a replica that is down.</summary>
    public static int Unused()
    {
        var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        int port = ((IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        return port;
    }
}

sealed class SeenCall
{
    public string Method, Path, Authorization, IdempotencyKey, Body;
    /// <summary>The port the call reached (which replica, when a test runs several).</summary>
    public int Port;
}

/// <summary>A stand-in's answer: a status, a JSON body and headers.</summary>
sealed class StandInReply
{
    public int Status;
    public string Body = "";
    public readonly Dictionary<string, string> Headers = new Dictionary<string, string>();

    public StandInReply(int status, string body) { Status = status; Body = body; }

    public StandInReply With(string header, string value) { Headers[header] = value; return this; }
}

/// <summary>
/// A replica that takes each request and closes the connection without an answer (the client
/// cannot tell whether it was applied). Raw TCP: Mono's HttpListener cannot drop a request unanswered.
/// </summary>
sealed class DroppingReplica
{
    readonly TcpListener _listener = new TcpListener(IPAddress.Loopback, 0);
    int _dropped;

    public DroppingReplica()
    {
        _listener.Start();
        Task.Run(async () =>
        {
            for (;;)
            {
                TcpClient client;
                try { client = await _listener.AcceptTcpClientAsync(); } catch (Exception) { return; }
                using (client)
                {
                    var buffer = new byte[4096];
                    try { await client.GetStream().ReadAsync(buffer, 0, buffer.Length); } catch (IOException) { }
                    Interlocked.Increment(ref _dropped);
                }
            }
        });
    }

    public string BaseUrl { get { return "http://127.0.0.1:" + ((IPEndPoint)_listener.LocalEndpoint).Port; } }
    public int Dropped { get { return Volatile.Read(ref _dropped); } }
    public void Stop() { _listener.Stop(); }
}

/// <summary>An HttpListener on a free loopback port: records every call, answers (status, JSON) from `answer`.</summary>
sealed class ApiStandIn
{
    readonly HttpListener _http = new HttpListener();
    readonly List<SeenCall> _calls = new List<SeenCall>();
    /// <summary>The recorded calls themselves (lock it to read while calls are in flight).</summary>
    public List<SeenCall> Recorded { get { return _calls; } }
    readonly Task _serving;
    public readonly int Port;
    public string BaseUrl { get { return "http://127.0.0.1:" + Port; } }

    public ApiStandIn(Func<SeenCall, KeyValuePair<int, string>> answer)
        : this(call => { var reply = answer(call); return new StandInReply(reply.Key, reply.Value); }) { }

    public ApiStandIn(Func<SeenCall, StandInReply> answer)
    {
        Port = Ports.Unused();
        _http.Prefixes.Add(BaseUrl + "/");
        _http.Start();
        _serving = Task.Run(() => Serve(answer));
    }

    /// <summary>The calls so far, in order.</summary>
    public List<SeenCall> Calls() { lock (_calls) return new List<SeenCall>(_calls); }

    public void Stop()
    {
        _http.Stop();
        _serving.Wait(1000);
    }

    void Serve(Func<SeenCall, StandInReply> answer)
    {
        while (_http.IsListening)
        {
            HttpListenerContext context;
            try { context = _http.GetContext(); } catch (HttpListenerException) { return; } catch (ObjectDisposedException) { return; }
            var request = context.Request;
            var call = new SeenCall { Method = request.HttpMethod, Path = request.Url.AbsolutePath, Authorization = request.Headers["Authorization"], IdempotencyKey = request.Headers["Idempotency-Key"], Port = Port };
            using (var reader = new StreamReader(request.InputStream, Encoding.UTF8)) call.Body = reader.ReadToEnd();
            lock (_calls) _calls.Add(call);
            StandInReply reply = answer(call);
            byte[] bytes = Encoding.UTF8.GetBytes(reply.Body);
            context.Response.StatusCode = reply.Status;
            context.Response.ContentType = reply.Status < 400 ? "application/json" : "application/problem+json";
            foreach (var header in reply.Headers) context.Response.Headers[header.Key] = header.Value;
            context.Response.OutputStream.Write(bytes, 0, bytes.Length);
            context.Response.Close();
        }
    }
}
