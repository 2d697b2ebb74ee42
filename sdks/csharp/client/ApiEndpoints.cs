// The API replicas a client may talk to, in order of preference (libs/sdk api-endpoints.ts). Every
// replica serves the same state (PostgreSQL and Redis are shared), so when one stops answering the
// client moves to the next and carries on: mutations keep their Idempotency-Key, and notifications
// resume from the last revision seen. A PlayerClient shares one list between its HTTP calls and
// its notification socket, so a replica found dead by one is left by both.
using System;
using System.Collections.Generic;
using System.Linq;

namespace Matchplane.Client
{
    public sealed class ApiEndpoints
    {
        readonly Uri[] _urls;
        readonly object _lock = new object();
        int _index;

        /// <param name="baseUrls">Each replica's base URL, e.g. https://mm-1.example.com (the /v1 prefix is added).</param>
        public ApiEndpoints(params string[] baseUrls) : this((IEnumerable<string>)baseUrls) { }

        public ApiEndpoints(IEnumerable<string> baseUrls)
        {
            if (baseUrls == null) throw new ArgumentNullException("baseUrls");
            // Fails fast on a malformed URL; each one keeps its path, with one trailing slash.
            _urls = baseUrls.Select(url => new Uri(url.TrimEnd('/') + "/v1/", UriKind.Absolute)).ToArray();
            if (_urls.Length == 0) throw new ArgumentException("at least one API base URL is required", "baseUrls");
        }

        public int Count { get { return _urls.Length; } }

        /// <summary>The replica to use now: its base URL with the /v1/ prefix.</summary>
        public Uri Current
        {
            get { lock (_lock) return _urls[_index]; }
        }

        /// <summary>
        /// `failed` did not answer: the next replica becomes current, unless another call already
        /// moved on from it (so a burst of failures against one replica moves the list once, not once each).
        /// </summary>
        public void Failover(Uri failed)
        {
            lock (_lock)
            {
                if (!ReferenceEquals(_urls[_index], failed)) return;
                _index = (_index + 1) % _urls.Length;
            }
        }
    }
}
