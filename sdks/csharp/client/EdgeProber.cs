// RTT measured at a region's probe edge over HTTP (docs/PROBES.md): a challenge, then at once its
// answer; the edge times the gap on its own clock and answers a measurement it signed, which the
// player client hands to the API unchanged. Several samples go in rounds (each answer brings the
// next challenge), as the TypeScript SDK takes them. Nothing here times anything: a client cannot
// make itself look closer than it is.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class EdgeProber
    {
        /// <summary>The most samples one probe takes: the most the API keeps per player and region
        /// (PROBE_SAMPLES_KEPT is at most 50); more would only be thrown away.</summary>
        public const int MaxSamples = 50;

        readonly HttpClient _http;

        public EdgeProber(HttpClient http) { _http = http; }

        /// <summary>The first http(s) edge the queue options list for the region, or null.</summary>
        public static string HttpEdgeOf(QueueOptions queueOptions, string region)
        {
            List<string> urls;
            if (queueOptions == null || !queueOptions.ProbeEdges.TryGetValue(region, out urls)) return null;
            return urls.FirstOrDefault(url => url.StartsWith("http://", StringComparison.Ordinal) || url.StartsWith("https://", StringComparison.Ordinal));
        }

        /// <summary>How old a chain of samples gets before it ends and its measurements go to the API:
        /// a third of the API's default PROBE_MEASUREMENT_MAX_AGE_MS (a minute), as in the TypeScript
        /// SDK. A deployment that shortens that passes a smaller recordWithinMs.</summary>
        public const int DefaultRecordWithinMs = 20000;

        /// <summary>Throws ArgumentOutOfRangeException unless samples is from 1 to MaxSamples.</summary>
        public static void CheckSamples(int samples)
        {
            if (samples < 1 || samples > MaxSamples)
                throw new ArgumentOutOfRangeException("samples", samples, "samples must be from 1 to " + MaxSamples + " (the most the API keeps per region)");
        }

        /// <summary>Throws ArgumentOutOfRangeException unless recordWithinMs is positive: with 0 or
        /// less every chain would be one sample.</summary>
        public static void CheckRecordWithinMs(int recordWithinMs)
        {
            if (recordWithinMs <= 0)
                throw new ArgumentOutOfRangeException("recordWithinMs", recordWithinMs, "recordWithinMs must be a positive number of milliseconds");
        }

        /// <summary>
        /// `samples` measurements, handed to `record` (the API) after each chain, with no sample on
        /// the wire: a recording's answer arriving mid-sample would delay the client's turnaround,
        /// which is inside the RTT. Answers record's last answer; the first refusal is thrown. A
        /// measurement expires (PROBE_MEASUREMENT_MAX_AGE_MS, a minute by default): a chain ends once
        /// it is recordWithinMs old, so none waits longer than about that before it is recorded.
        /// PlayerClient.ProbeAsync, the one way in, checks samples and recordWithinMs.
        /// </summary>
        internal async Task<T> ProbeAsync<T>(string edgeUrl, string playerId, string region, int samples, int recordWithinMs, Func<string, Task<T>> record) where T : class
        {
            string identity = Identity(playerId, region);
            T last = null;
            bool edgeHasRounds = true;
            int taken = 0;
            while (taken < samples)
            {
                Chain chain = await MeasureChainAsync(edgeUrl, identity, samples - taken, recordWithinMs, edgeHasRounds).ConfigureAwait(false);
                edgeHasRounds = chain.EdgeHasRounds;
                taken += chain.Measurements.Count;
                foreach (string measurement in chain.Measurements) last = await record(measurement).ConfigureAwait(false);
            }
            return last;
        }

        sealed class Chain
        {
            public readonly List<string> Measurements = new List<string>();
            public bool EdgeHasRounds;
        }

        // Up to `wanted` measurements in one chain: a challenge, then rounds (each answers the last
        // challenge and brings the next), the last a plain answer, so n samples in n + 1 requests.
        // The chain ends early, with a plain answer, once it is recordWithinMs old. An edge without
        // rounds (404) gives none here: the refused round's challenge is a round trip old, and
        // answered it would read long; the chains after that are a challenge and an answer each.
        async Task<Chain> MeasureChainAsync(string edgeUrl, string identity, int wanted, int recordWithinMs, bool edgeHasRounds)
        {
            Stopwatch age = Stopwatch.StartNew();
            var chain = new Chain { EdgeHasRounds = edgeHasRounds };
            string challenge = await PostAsync(edgeUrl, "v1/probe/challenges", "{" + identity + "}").ConfigureAwait(false);
            while (true)
            {
                string body = AnswerBody(identity, challenge);
                bool chained = edgeHasRounds && chain.Measurements.Count < wanted - 1 && age.ElapsedMilliseconds < recordWithinMs;
                if (!chained)
                {
                    chain.Measurements.Add(await PostAsync(edgeUrl, "v1/probe/answers", body).ConfigureAwait(false));
                    return chain;
                }
                string round = await RoundAsync(edgeUrl, body).ConfigureAwait(false);
                if (round == null)
                {
                    chain.EdgeHasRounds = false;
                    return chain;
                }
                chain.Measurements.Add(RawMember(round, "measurement"));
                challenge = RawMember(round, "challenge");
            }
        }

        // A round's reply, or null where the edge has no rounds (404).
        async Task<string> RoundAsync(string edgeUrl, string body)
        {
            try { return await PostAsync(edgeUrl, "v1/probe/rounds", body).ConfigureAwait(false); }
            catch (MatchplaneApiException e) when (e.Status == 404) { return null; }
        }

        static string Identity(string playerId, string region)
        {
            return "\"playerId\":" + JsonText.Quote(playerId) + ",\"region\":" + JsonText.Quote(region);
        }

        // The challenge goes back byte for byte: it is opaque to the client, and not re-serialising
        // it keeps the client's turnaround (inside the RTT) short.
        static string AnswerBody(string identity, string challenge)
        {
            return "{" + identity + ",\"challenge\":" + challenge.Trim() + "}";
        }

        /// <summary>
        /// The text of a top-level member's value in a JSON object, as written: a round's measurement
        /// and next challenge are passed on without a parse and re-serialisation (MiniJson keeps no
        /// text, and its numbers are doubles).
        /// </summary>
        internal static string RawMember(string json, string key)
        {
            string wanted = JsonText.Quote(key);
            int depth = 0;
            for (int i = 0; i < json.Length; i++)
            {
                char c = json[i];
                if (c == '{' || c == '[') depth++;
                else if (c == '}' || c == ']') depth--;
                else if (c == '"')
                {
                    int end = StringEnd(json, i);
                    int colon = SkipSpace(json, end);
                    if (depth == 1 && colon < json.Length && json[colon] == ':' && string.CompareOrdinal(json, i, wanted, 0, wanted.Length) == 0 && end - i == wanted.Length)
                    {
                        int start = SkipSpace(json, colon + 1);
                        return json.Substring(start, ValueEnd(json, start) - start);
                    }
                    i = end - 1;
                }
            }
            throw new FormatException("the edge's reply has no " + key + ": " + json);
        }

        // The index just past the string literal opening at `start`.
        static int StringEnd(string json, int start)
        {
            for (int i = start + 1; i < json.Length; i++)
            {
                if (json[i] == '\\') i++;
                else if (json[i] == '"') return i + 1;
            }
            throw new FormatException("unterminated string in the edge's reply");
        }

        static int SkipSpace(string json, int i)
        {
            while (i < json.Length && char.IsWhiteSpace(json[i])) i++;
            return i;
        }

        // The index just past the value starting at `start`.
        static int ValueEnd(string json, int start)
        {
            int depth = 0;
            for (int i = start; i < json.Length; i++)
            {
                char c = json[i];
                if (c == '"') { i = StringEnd(json, i) - 1; if (depth == 0) return i + 1; }
                else if (c == '{' || c == '[') depth++;
                else if (c == '}' || c == ']') { if (depth == 0) return i; if (--depth == 0) return i + 1; }
                else if (depth == 0 && (c == ',' || char.IsWhiteSpace(c))) return i;
            }
            return json.Length;
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
