// A bare WebSocket server over TcpListener for the client tests (Mono's HttpListener does not
// implement AcceptWebSocketAsync): the RFC 6455 handshake, unmasked text frames out, masked
// frames in, and close frames with a code. One connection at a time, enough for scripted tests.
using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Tasks;

sealed class TestWebSocketServer
{
    readonly TcpListener _listener = new TcpListener(IPAddress.Loopback, 0);

    public TestWebSocketServer() { _listener.Start(); }

    public int Port { get { return ((IPEndPoint)_listener.LocalEndpoint).Port; } }

    public void Stop() { _listener.Stop(); }

    public sealed class Connection
    {
        readonly NetworkStream _stream;
        readonly TcpClient _client;
        /// <summary>Request path and headers (names lower-cased).</summary>
        public string Path;
        public readonly Dictionary<string, string> Headers = new Dictionary<string, string>();

        internal Connection(TcpClient client) { _client = client; _stream = client.GetStream(); }

        internal async Task HandshakeAsync(string subprotocol)
        {
            string head = await ReadHeadAsync();
            string[] lines = head.Split(new[] { "\r\n" }, StringSplitOptions.RemoveEmptyEntries);
            Path = lines[0].Split(' ')[1];
            for (int i = 1; i < lines.Length; i++)
            {
                int colon = lines[i].IndexOf(':');
                Headers[lines[i].Substring(0, colon).Trim().ToLowerInvariant()] = lines[i].Substring(colon + 1).Trim();
            }
            string accept;
            using (var sha1 = SHA1.Create())
                accept = Convert.ToBase64String(sha1.ComputeHash(Encoding.ASCII.GetBytes(Headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));
            string response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n" +
                (subprotocol == null ? "" : "Sec-WebSocket-Protocol: " + subprotocol + "\r\n") + "\r\n";
            byte[] bytes = Encoding.ASCII.GetBytes(response);
            await _stream.WriteAsync(bytes, 0, bytes.Length);
        }

        async Task<string> ReadHeadAsync()
        {
            var head = new List<byte>();
            var one = new byte[1];
            while (head.Count < 4 || !(head[head.Count - 4] == '\r' && head[head.Count - 3] == '\n' && head[head.Count - 2] == '\r' && head[head.Count - 1] == '\n'))
            {
                if (await _stream.ReadAsync(one, 0, 1) == 0) throw new EndOfStreamException();
                head.Add(one[0]);
            }
            return Encoding.ASCII.GetString(head.ToArray());
        }

        public Task SendTextAsync(string text) { return SendFrameAsync(0x1, Encoding.UTF8.GetBytes(text)); }

        /// <summary>Sends a close frame with the code and reason, then drops the connection.</summary>
        public async Task CloseAsync(int code, string reason)
        {
            byte[] why = Encoding.UTF8.GetBytes(reason);
            var payload = new byte[2 + why.Length];
            payload[0] = (byte)(code >> 8);
            payload[1] = (byte)code;
            Array.Copy(why, 0, payload, 2, why.Length);
            await SendFrameAsync(0x8, payload);
            await Task.Delay(100);
            _client.Close();
        }

        /// <summary>Drops the connection without a close frame, as a network loss would.</summary>
        public void Drop() { _client.Close(); }

        async Task SendFrameAsync(int opcode, byte[] payload)
        {
            var frame = new List<byte> { (byte)(0x80 | opcode) };
            if (payload.Length < 126) frame.Add((byte)payload.Length);
            else { frame.Add(126); frame.Add((byte)(payload.Length >> 8)); frame.Add((byte)payload.Length); }
            frame.AddRange(payload);
            byte[] bytes = frame.ToArray();
            await _stream.WriteAsync(bytes, 0, bytes.Length);
        }

        /// <summary>The next text frame from the client (masked, as clients must send); null on close.</summary>
        public async Task<string> ReceiveTextAsync()
        {
            for (;;)
            {
                byte[] head = await ReadExactAsync(2);
                int opcode = head[0] & 0x0f;
                long length = head[1] & 0x7f;
                if (length == 126) { byte[] ext = await ReadExactAsync(2); length = (ext[0] << 8) | ext[1]; }
                else if (length == 127) throw new NotSupportedException("test frames are small");
                byte[] mask = (head[1] & 0x80) != 0 ? await ReadExactAsync(4) : null;
                byte[] payload = await ReadExactAsync((int)length);
                if (mask != null) for (int i = 0; i < payload.Length; i++) payload[i] ^= mask[i % 4];
                if (opcode == 0x8) return null;
                if (opcode == 0x1) return Encoding.UTF8.GetString(payload);
            }
        }

        async Task<byte[]> ReadExactAsync(int count)
        {
            var buffer = new byte[count];
            for (int read = 0; read < count;)
            {
                int n = await _stream.ReadAsync(buffer, read, count - read);
                if (n == 0) throw new EndOfStreamException();
                read += n;
            }
            return buffer;
        }
    }

    /// <summary>Accepts the next connection and completes its handshake, selecting the subprotocol given.</summary>
    public async Task<Connection> AcceptAsync(string subprotocol = null)
    {
        var connection = new Connection(await _listener.AcceptTcpClientAsync());
        await connection.HandshakeAsync(subprotocol);
        return connection;
    }
}
