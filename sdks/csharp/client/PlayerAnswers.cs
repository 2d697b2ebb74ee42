// The player API's answers as typed classes (libs/contracts/src/player-api.ts and
// notification-protocol.ts): what PlayerClient returns. Each keeps the parsed body as Raw, for a
// member added to the API after this SDK. A member the contract requires and the answer lacks is a
// FormatException; an optional one absent is null.
using System.Collections.Generic;
using System.Linq;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>Reads members of a parsed answer: required ones throw FormatException when absent, optional ones are null.</summary>
    public static class JsonRead
    {
        /// <summary>The answer of a route that always has a body; an empty one is a contract violation worth a clear error.</summary>
        public static JsonValue Required(JsonValue answer, string call)
        {
            if (answer == null) throw new System.FormatException(call + " answered without a body");
            return answer;
        }

        public static string OptString(JsonValue v, string key)
        {
            var m = v.Find(key);
            return m == null || m.Kind == JsonKind.Null ? null : m.Str;
        }

        public static long? OptLong(JsonValue v, string key)
        {
            var m = v.Find(key);
            return m == null || m.Kind == JsonKind.Null ? (long?)null : m.Long;
        }

        /// <summary>A number of any kind (an RTT or a wait may have a fraction).</summary>
        public static double Number(JsonValue v)
        {
            if (v.Kind != JsonKind.Number) throw new System.FormatException("JSON value is not a number");
            return v.IsInteger ? v.Integer : v.Number;
        }

        public static double? OptNumber(JsonValue v, string key)
        {
            var m = v.Find(key);
            return m == null || m.Kind == JsonKind.Null ? (double?)null : Number(m);
        }

        public static List<string> Strings(JsonValue v) { return v.Array.Select(s => s.Str).ToList(); }

        /// <summary>An optional JSON object read member by member; empty when absent.</summary>
        public static Dictionary<string, T> OptMap<T>(JsonValue v, string key, System.Func<JsonValue, T> read)
        {
            var m = v.Find(key);
            var map = new Dictionary<string, T>();
            if (m != null && m.Kind == JsonKind.Object) foreach (var member in m.Object) map[member.Key] = read(member.Value);
            return map;
        }

        /// <summary>An optional array read item by item; empty when absent.</summary>
        public static List<T> OptArray<T>(JsonValue v, string key, System.Func<JsonValue, T> read)
        {
            var m = v.Find(key);
            return m == null || m.Kind == JsonKind.Null ? new List<T>() : m.Array.Select(read).ToList();
        }

        /// <summary>An optional array of strings; empty when absent.</summary>
        public static List<string> OptStrings(JsonValue v, string key)
        {
            var m = v.Find(key);
            return m == null || m.Kind == JsonKind.Null ? new List<string>() : Strings(m);
        }
    }

    /// <summary>POST /v1/sessions.</summary>
    public sealed class Session
    {
        public string Token, PlayerId, ExpiresAt;
        /// <summary>Only when a new guest was created: keep it to resume this player on this device.</summary>
        public string DeviceSecret;
        public JsonValue Raw;

        public static Session From(JsonValue v)
        {
            return new Session
            {
                Token = v["token"].Str, PlayerId = v["playerId"].Str, ExpiresAt = v["expiresAt"].Str,
                DeviceSecret = JsonRead.OptString(v, "deviceSecret"), Raw = v,
            };
        }
    }

    /// <summary>A fill step: once a match's oldest searcher waited AfterMs, it may start with MinPlayers (whole teams) or more.</summary>
    public sealed class FillStep
    {
        public long AfterMs, MinPlayers;

        public static FillStep From(JsonValue v) { return new FillStep { AfterMs = v["afterMs"].Long, MinPlayers = v["minPlayers"].Long }; }
    }

    public sealed class QueueModeOption
    {
        public string Mode;
        /// <summary>TeamSize is the largest team's size (the largest party the mode takes).</summary>
        public long TeamSize, TeamCount, QueueDepth;
        /// <summary>Each team's size in team order ([4, 1] for 4 hunters v 1 monster); empty from an API older than it.</summary>
        public List<long> TeamSizes;
        /// <summary>The mode's fill steps; empty: matches start full.</summary>
        public List<FillStep> Fill;
        /// <summary>Absent (null): the mode has no such limit or ready check.</summary>
        public long? SearchTimeoutMs, AcceptanceTimeoutMs, RejoinGraceMs;
        /// <summary>The attributes a ticket of this mode may or must carry (an array of declarations).</summary>
        public JsonValue Attributes;

        public static QueueModeOption From(JsonValue v)
        {
            return new QueueModeOption
            {
                Mode = v["mode"].Str, TeamSize = v["teamSize"].Long, TeamCount = v["teamCount"].Long,
                QueueDepth = JsonRead.OptLong(v, "queueDepth") ?? 0,
                TeamSizes = JsonRead.OptArray(v, "teamSizes", size => size.Long),
                Fill = JsonRead.OptArray(v, "fill", FillStep.From),
                SearchTimeoutMs = JsonRead.OptLong(v, "searchTimeoutMs"),
                AcceptanceTimeoutMs = JsonRead.OptLong(v, "acceptanceTimeoutMs"),
                RejoinGraceMs = JsonRead.OptLong(v, "rejoinGraceMs"),
                Attributes = v.Find("attributes"),
            };
        }
    }

    /// <summary>GET /v1/queue/options: what the player may queue for and probe.</summary>
    public sealed class QueueOptions
    {
        public List<QueueModeOption> Modes;
        public List<string> Regions;
        public long HeartbeatIntervalMs;
        /// <summary>Each region's probe edge URLs (http(s):// and udp://) in order; a region left out is probed at the API.</summary>
        public Dictionary<string, List<string>> ProbeEdges;
        public JsonValue Raw;

        public static QueueOptions From(JsonValue v)
        {
            return new QueueOptions
            {
                Modes = v["modes"].Array.Select(QueueModeOption.From).ToList(),
                Regions = JsonRead.Strings(v["regions"]),
                HeartbeatIntervalMs = v["heartbeatIntervalMs"].Long,
                ProbeEdges = JsonRead.OptMap(v, "probeEdges", JsonRead.Strings),
                Raw = v,
            };
        }
    }

    /// <summary>POST /v1/probes/{region}/challenge: answer it at once with its id and nonce.</summary>
    public sealed class ProbeChallenge
    {
        public string ChallengeId, Region, Nonce, IssuedAt, ExpiresAt;

        public static ProbeChallenge From(JsonValue v)
        {
            return new ProbeChallenge
            {
                ChallengeId = v["challengeId"].Str, Region = v["region"].Str, Nonce = v["nonce"].Str,
                IssuedAt = JsonRead.OptString(v, "issuedAt"), ExpiresAt = JsonRead.OptString(v, "expiresAt"),
            };
        }
    }

    /// <summary>A probe's answer (POST /v1/probes/{region}/answer or /v1/probes/measurements).</summary>
    public sealed class ProbeResult
    {
        public string Region;
        public double RttMs;
        /// <summary>The robust estimate placement uses (median of the retained samples).</summary>
        public double EstimateMs;
        public List<double> SamplesMs;
        /// <summary>The edge's measurement id when measured at a probe edge; null for the API's own probe.</summary>
        public string MeasurementId;

        public static ProbeResult From(JsonValue v)
        {
            return new ProbeResult
            {
                Region = v["region"].Str, RttMs = JsonRead.Number(v["rttMs"]), EstimateMs = JsonRead.Number(v["estimateMs"]),
                SamplesMs = v["samplesMs"].Array.Select(JsonRead.Number).ToList(),
                MeasurementId = JsonRead.OptString(v, "measurementId"),
            };
        }
    }

    /// <summary>A queue ticket (create, heartbeat, cancel, read).</summary>
    public sealed class Ticket
    {
        public string Id, PlayerId, Mode, State, EnqueuedAt, LastHeartbeatAt;
        public long Revision;
        public List<string> RegionsMeasured;
        public Dictionary<string, double> PredictedRttMs;
        public double WaitSeconds;
        /// <summary>The ticket's attributes, defaults filled in (a JSON object of strings and numbers).</summary>
        public JsonValue Attributes;
        /// <summary>Null until matched.</summary>
        public string MatchId;
        /// <summary>Why the ticket ended (e.g. NO_SHOW, SEARCH_TIMED_OUT); null while live and for COMPLETED.</summary>
        public string EndReason;
        /// <summary>While searching, once a matcher pass looked at it: why it is not matched yet (code, message, evaluatedAt).</summary>
        public JsonValue Explanation;
        public double? EstimatedWaitSeconds;
        /// <summary>A party member's ticket: the shared party ticket and the party's size.</summary>
        public string PartyTicketId;
        public long? PartySize;
        public JsonValue Raw;

        public static Ticket From(JsonValue v)
        {
            return new Ticket
            {
                Id = v["id"].Str, PlayerId = v["playerId"].Str, Mode = v["mode"].Str, State = v["state"].Str,
                Revision = v["revision"].Long, EnqueuedAt = v["enqueuedAt"].Str, LastHeartbeatAt = v["lastHeartbeatAt"].Str,
                RegionsMeasured = JsonRead.OptStrings(v, "regionsMeasured"),
                PredictedRttMs = JsonRead.OptMap(v, "predictedRttMs", JsonRead.Number),
                WaitSeconds = JsonRead.OptNumber(v, "waitSeconds") ?? 0,
                Attributes = v.Find("attributes"),
                MatchId = JsonRead.OptString(v, "matchId"), EndReason = JsonRead.OptString(v, "endReason"),
                Explanation = v.Find("explanation"),
                EstimatedWaitSeconds = JsonRead.OptNumber(v, "estimatedWaitSeconds"),
                PartyTicketId = JsonRead.OptString(v, "partyTicketId"), PartySize = JsonRead.OptLong(v, "partySize"),
                Raw = v,
            };
        }
    }

    public sealed class PartyMember
    {
        public string PlayerId, JoinedAt;
        /// <summary>Whether the member has a measured RTT to at least one region (required to enqueue).</summary>
        public bool Probed;
        public List<string> RegionsMeasured;
        /// <summary>The member's live ticket once the party is queued; null before.</summary>
        public string TicketId;

        public static PartyMember From(JsonValue v)
        {
            var probed = v["probed"];
            if (probed.Kind != JsonKind.Bool) throw new System.FormatException("probed is not a boolean");
            return new PartyMember
            {
                PlayerId = v["playerId"].Str, JoinedAt = v["joinedAt"].Str, Probed = probed.Bool,
                RegionsMeasured = JsonRead.OptStrings(v, "regionsMeasured"), TicketId = JsonRead.OptString(v, "ticketId"),
            };
        }
    }

    /// <summary>A party (create, join, current).</summary>
    public sealed class Party
    {
        public string PartyId, LeaderId, InviteExpiresAt;
        /// <summary>Oldest first (the leader first).</summary>
        public List<PartyMember> Members;
        public long MaxSize;
        /// <summary>Only in the answer of CreatePartyAsync, to the leader: the server keeps only its hash.</summary>
        public string InviteCode;

        public static Party From(JsonValue v)
        {
            return new Party
            {
                PartyId = v["partyId"].Str, LeaderId = v["leaderId"].Str, InviteExpiresAt = JsonRead.OptString(v, "inviteExpiresAt"),
                Members = v["members"].Array.Select(PartyMember.From).ToList(), MaxSize = JsonRead.OptLong(v, "maxSize") ?? 0,
                InviteCode = JsonRead.OptString(v, "inviteCode"),
            };
        }
    }

    /// <summary>POST /v1/queue/party-tickets: one ticket per member, sharing PartyTicketId.</summary>
    public sealed class PartyTickets
    {
        public string PartyTicketId, PartyId, Mode;
        public List<Ticket> Tickets;

        public static PartyTickets From(JsonValue v)
        {
            return new PartyTickets
            {
                PartyTicketId = v["partyTicketId"].Str, PartyId = v["partyId"].Str, Mode = v["mode"].Str,
                Tickets = v["tickets"].Array.Select(Ticket.From).ToList(),
            };
        }
    }

    /// <summary>GET /v1/matches/{id}/assignment: where and how this player joins its match.</summary>
    public sealed class Assignment
    {
        public string MatchId, State, Region, ServerRegion, ServerId, Endpoint, JoinToken, ExpiresAt;
        public int Team;

        public static Assignment From(JsonValue v)
        {
            return new Assignment
            {
                MatchId = v["matchId"].Str, State = v["state"].Str, Region = v["region"].Str, ServerRegion = v["serverRegion"].Str,
                ServerId = v["serverId"].Str, Endpoint = v["endpoint"].Str, Team = checked((int)v["team"].Long),
                JoinToken = v["joinToken"].Str, ExpiresAt = v["expiresAt"].Str,
            };
        }
    }

    /// <summary>GET /v1/matches/{id}/events?after=N: what a socket resuming from N would be sent.</summary>
    public sealed class MatchEvents
    {
        public string MatchId, State;
        public long Revision;
        /// <summary>Set when the events after N are no longer retained: take it as the state at its revision.</summary>
        public ResyncMessage Resync;
        /// <summary>The events after N (after Resync, when there is one), in order.</summary>
        public List<MatchEvent> Events = new List<MatchEvent>();

        public static MatchEvents From(JsonValue v)
        {
            var events = new MatchEvents { MatchId = v["matchId"].Str, State = v["state"].Str, Revision = v["revision"].Long };
            foreach (var message in v["messages"].Array)
            {
                if (message["type"].Str == "resync") events.Resync = ResyncMessage.From(message);
                else events.Events.Add(MatchEvent.From(message));
            }
            return events;
        }
    }
}
