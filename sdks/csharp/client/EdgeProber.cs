// RTT measured at a region's probe edge over HTTP (docs/PROBES.md): a challenge, then at once its
// answer; the edge times the gap on its own clock and answers a measurement it signed, which the
// player client hands to the API unchanged. Nothing here times anything: a client cannot make
// itself look closer than it is.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class EdgeProber
    {
        readonly HttpClient _http;

        public EdgeProber(HttpClient http) { _http = http; }

        /// <summary>The first http(s) edge the queue options list for the region, or null.</summary>
        public static string HttpEdgeOf(QueueOptions queueOptions, string region)
        {
            List<string> urls;
            if (queueOptions == null || !queueOptions.ProbeEdges.TryGetValue(region, out urls)) return null;
            return urls.FirstOrDefault(url => url.StartsWith("http://", StringComparison.Ordinal) || url.StartsWith("https://", StringComparison.Ordinal));
        }

        /// <summary>One sample: answers the signed measurement's JSON text, to be POSTed to the API as is.</summary>
        public async Task<string> MeasureAsync(string edgeUrl, string playerId, string region)
        {
            string identity = "\"playerId\":" + JsonText.Quote(playerId) + ",\"region\":" + JsonText.Quote(region);
            string challenge = await PostAsync(edgeUrl, "v1/probe/challenges", "{" + identity + "}").ConfigureAwait(false);
            // The challenge goes back byte for byte: it is opaque to the client, and not re-serialising
            // it keeps the client's turnaround (inside the RTT) short.
            return await PostAsync(edgeUrl, "v1/probe/answers", "{" + identity + ",\"challenge\":" + challenge.Trim() + "}").ConfigureAwait(false);
        }

        async Task<string> PostAsync(string edgeUrl, string path, string body)
        {
            string url = edgeUrl.TrimEnd('/') + "/" + path;
            using (var content = new StringContent(body, Encoding.UTF8, "application/json"))
            using (HttpResponseMessage response = await _http.PostAsync(url, content).ConfigureAwait(false))
            {
                string text = response.Content == null ? "" : await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                if (response.IsSuccessStatusCode) return text;
                JsonValue problem = null;
                try { problem = text.Length > 0 ? MiniJson.Parse(text) : null; }
                catch (FormatException) { }
                throw new MatchplaneApiException("POST", url, (int)response.StatusCode, problem);
            }
        }
    }
}
