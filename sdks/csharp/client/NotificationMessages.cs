// The server -> client messages of the notification socket (docs/asyncapi.yaml,
// libs/contracts/src/notification-protocol.ts) and the per-match revision bookkeeping that turns
// them into each match's events once, in order, without a gap.
using System;
using System.Collections.Generic;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>One match event (live or replayed), e.g. match.state_changed.</summary>
    public sealed class MatchEvent
    {
        public string Event, MatchId, State, OccurredAt;
        /// <summary>Where the match's game server runs, from PROCESS_READY on; null before.</summary>
        public string ServerRegion;
        public long Revision;

        public static MatchEvent From(JsonValue message)
        {
            var region = message.Find("serverRegion");
            return new MatchEvent
            {
                Event = message["event"].Str,
                MatchId = message["matchId"].Str,
                State = message["state"].Str,
                OccurredAt = message["occurredAt"].Str,
                ServerRegion = region != null && region.Kind == JsonKind.String ? region.String : null,
                Revision = message["revision"].Long,
            };
        }
    }

    /// <summary>
    /// The server jumped a match to its current state (Reason RETENTION_EXPIRED, UNKNOWN_REVISION or
    /// BUFFER_OVERFLOW): take State as the state at Revision and go on from there.
    /// </summary>
    public sealed class ResyncMessage
    {
        public string MatchId, State, Reason;
        public long Revision;

        public static ResyncMessage From(JsonValue message)
        {
            return new ResyncMessage
            {
                MatchId = message["matchId"].Str,
                State = message["state"].Str,
                Reason = message["reason"].Str,
                Revision = message["revision"].Long,
            };
        }
    }

    /// <summary>
    /// The last revision delivered per match, and events held back after a gap until the server's
    /// replay fills it. Not thread-safe: the subscription calls it from its one receive loop (and
    /// Follow under the same lock).
    /// </summary>
    public sealed class RevisionTracker
    {
        readonly Dictionary<string, long> _seen = new Dictionary<string, long>();
        readonly Dictionary<string, List<MatchEvent>> _held = new Dictionary<string, List<MatchEvent>>();

        public RevisionTracker(IDictionary<string, long> lastSeen = null)
        {
            if (lastSeen != null) foreach (var entry in lastSeen) _seen[entry.Key] = entry.Value;
        }

        /// <summary>What to send in a resume: every match with its last delivered revision.</summary>
        public List<KeyValuePair<string, long>> Snapshot() { return new List<KeyValuePair<string, long>>(_seen); }

        /// <summary>Also follows matchId from afterRevision (never back before what was delivered); answers the revision to resume from.</summary>
        public long Follow(string matchId, long afterRevision)
        {
            long last;
            long from = _seen.TryGetValue(matchId, out last) ? Math.Max(last, afterRevision) : afterRevision;
            _seen[matchId] = from;
            return from;
        }

        /// <summary>
        /// Takes an event; answers the events to deliver now, in order (none for a duplicate or an
        /// event after a gap). resumeFrom is set (once per gap) when the server must be asked to
        /// replay the match from that revision.
        /// </summary>
        public List<MatchEvent> Accept(MatchEvent e, out long? resumeFrom)
        {
            resumeFrom = null;
            var deliver = new List<MatchEvent>();
            long last;
            bool known = _seen.TryGetValue(e.MatchId, out last);
            if (known && e.Revision <= last) return deliver;
            if (!known || e.Revision == last + 1)
            {
                _seen[e.MatchId] = e.Revision;
                deliver.Add(e);
                Release(e.MatchId, deliver);
                return deliver;
            }
            List<MatchEvent> held;
            if (_held.TryGetValue(e.MatchId, out held))
            {
                if (!held.Exists(other => other.Revision == e.Revision)) held.Add(e);
                return deliver;
            }
            _held[e.MatchId] = new List<MatchEvent> { e };
            resumeFrom = last;
            return deliver;
        }

        /// <summary>
        /// A resync: the match is at its revision now; answers the held events that follow on.
        /// BUFFER_OVERFLOW changes nothing: the server closes the socket next, and resuming from what
        /// was delivered replays the events.
        /// </summary>
        public List<MatchEvent> Resync(ResyncMessage resync)
        {
            var deliver = new List<MatchEvent>();
            if (resync.Reason == "BUFFER_OVERFLOW") return deliver;
            _seen[resync.MatchId] = resync.Revision;
            Release(resync.MatchId, deliver);
            return deliver;
        }

        void Release(string matchId, List<MatchEvent> deliver)
        {
            List<MatchEvent> held;
            if (!_held.TryGetValue(matchId, out held)) return;
            held.Sort((a, b) => a.Revision.CompareTo(b.Revision));
            while (held.Count > 0)
            {
                MatchEvent next = held[0];
                long last = _seen[matchId];
                if (next.Revision > last + 1) return;
                held.RemoveAt(0);
                if (next.Revision == last + 1)
                {
                    _seen[matchId] = next.Revision;
                    deliver.Add(next);
                }
            }
            _held.Remove(matchId);
        }
    }
}
