// The server API's answers as typed classes (libs/contracts/src/server-api.ts and
// server-presence.ts): what ServerClient returns.
using System.Collections.Generic;
using System.Linq;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>The match after a server's report: register (ServerId set), initial connect (NoShowPlayerIds), result.</summary>
    public sealed class ServerMatchState
    {
        public string MatchId, State;
        /// <summary>Register's answer only; null otherwise.</summary>
        public string ServerId;
        public long Revision;
        /// <summary>Initial connect's answer: participants who never connected (penalised); empty otherwise.</summary>
        public List<string> NoShowPlayerIds;
        /// <summary>
        /// A result only: an earlier attempt went unanswered and a retry was refused with 401
        /// ALLOCATION_ENDED, so that attempt was recorded (State and Revision are then unknown).
        /// </summary>
        public bool AlreadyRecorded;

        public static ServerMatchState From(JsonValue v)
        {
            return new ServerMatchState
            {
                MatchId = v["matchId"].Str, State = v["state"].Str, Revision = v["revision"].Long,
                ServerId = JsonRead.OptString(v, "serverId"), NoShowPlayerIds = JsonRead.OptStrings(v, "noShowPlayerIds"),
            };
        }
    }

    /// <summary>POST /v1/servers/{id}/heartbeat.</summary>
    public sealed class ServerHeartbeat
    {
        public string MatchId, ServerId;

        public static ServerHeartbeat From(JsonValue v)
        {
            return new ServerHeartbeat { MatchId = v["matchId"].Str, ServerId = v["serverId"].Str };
        }
    }

    public sealed class RosterEntryView
    {
        public string PlayerId, JoinToken, ExpiresAt;
        public int Team;

        public static RosterEntryView From(JsonValue v)
        {
            return new RosterEntryView
            {
                PlayerId = v["playerId"].Str, Team = checked((int)v["team"].Long), JoinToken = v["joinToken"].Str,
                ExpiresAt = JsonRead.OptString(v, "expiresAt"),
            };
        }
    }

    /// <summary>GET /v1/servers/{id}/roster: every player's team and join token, with the allocator's signed manifest.</summary>
    public sealed class Roster
    {
        public string MatchId, ServerId, Endpoint, Mode, Region;
        /// <summary>The newest published roster revision (the manifest's).</summary>
        public long Revision;
        public List<RosterEntryView> Entries;
        public RosterManifest Manifest;

        public static Roster From(JsonValue v)
        {
            return new Roster
            {
                MatchId = v["matchId"].Str, ServerId = v["serverId"].Str, Endpoint = JsonRead.OptString(v, "endpoint"),
                Mode = JsonRead.OptString(v, "mode"), Region = JsonRead.OptString(v, "region"),
                Revision = JsonRead.OptLong(v, "revision") ?? 1,
                Entries = v["entries"].Array.Select(RosterEntryView.From).ToList(),
                Manifest = RosterManifest.FromJson(v["manifest"]),
            };
        }
    }

    /// <summary>A backfill request (request, read, cancel, accept, connect).</summary>
    public sealed class Backfill
    {
        public string RequestId, MatchId, State, ExpiresAt;
        /// <summary>Why it was CANCELLED or EXPIRED; null otherwise.</summary>
        public string Reason;
        public int Team, Slots;
        /// <summary>The players the matcher added (from MATCHED on), ascending.</summary>
        public List<string> PlayerIds;
        /// <summary>The roster revision that carries them (from PUBLISHED on); null before.</summary>
        public long? RosterRevision;
        public long Revision;
        /// <summary>The connect report's answer: added players who never connected; empty otherwise.</summary>
        public List<string> NoShowPlayerIds;

        public static Backfill From(JsonValue v)
        {
            return new Backfill
            {
                RequestId = v["requestId"].Str, MatchId = v["matchId"].Str, State = v["state"].Str, ExpiresAt = v["expiresAt"].Str,
                Reason = JsonRead.OptString(v, "reason"), Team = checked((int)v["team"].Long), Slots = checked((int)v["slots"].Long),
                PlayerIds = JsonRead.OptStrings(v, "playerIds"), RosterRevision = JsonRead.OptLong(v, "rosterRevision"),
                Revision = v["revision"].Long, NoShowPlayerIds = JsonRead.OptStrings(v, "noShowPlayerIds"),
            };
        }
    }

    /// <summary>A player's presence after a left or rejoined report.</summary>
    public sealed class PlayerPresence
    {
        public string MatchId, PlayerId;
        /// <summary>CONNECTED, LEFT, REJOINED or ABANDONED.</summary>
        public string Presence;
        /// <summary>Until when a LEFT player may rejoin; null otherwise.</summary>
        public string RejoinDeadline;
        public long LeaveCount, MatchRevision;

        public static PlayerPresence From(JsonValue v)
        {
            return new PlayerPresence
            {
                MatchId = v["matchId"].Str, PlayerId = v["playerId"].Str, Presence = v["presence"].Str,
                RejoinDeadline = JsonRead.OptString(v, "rejoinDeadline"),
                LeaveCount = JsonRead.OptLong(v, "leaveCount") ?? 0, MatchRevision = JsonRead.OptLong(v, "matchRevision") ?? 0,
            };
        }
    }
}
