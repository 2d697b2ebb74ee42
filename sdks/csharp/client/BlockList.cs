// A player's block list (libs/sdk player-client.ts blockList/blockPlayer/unblockPlayer, the API's
// /v1/blocks): the matcher never puts two players in one match when either blocked the other.
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class BlockedPlayer
    {
        public string PlayerId, BlockedAt;

        public static BlockedPlayer From(JsonValue v)
        {
            return new BlockedPlayer { PlayerId = v["playerId"].Str, BlockedAt = v["blockedAt"].Str };
        }
    }

    /// <summary>GET /v1/blocks, and the answer of blocking and unblocking.</summary>
    public sealed class BlockList
    {
        /// <summary>Oldest block first.</summary>
        public List<BlockedPlayer> Blocked;
        /// <summary>How many players the list may hold.</summary>
        public long MaxEntries;

        public static BlockList From(JsonValue v)
        {
            return new BlockList { Blocked = v["blocked"].Array.Select(BlockedPlayer.From).ToList(), MaxEntries = v["maxEntries"].Long };
        }
    }

    public sealed partial class PlayerClient
    {
        /// <summary>The players this player blocked (oldest first) and how many the list may hold.</summary>
        public Task<BlockList> BlockListAsync() { return SendAsync(HttpMethod.Get, "blocks", null, RetryMode.Safe, BlockList.From); }

        /// <summary>Blocks a player. A repeat changes nothing (so it is retried as is); a full list is a 409 BLOCK_LIST_FULL.</summary>
        public Task<BlockList> BlockPlayerAsync(string playerId)
        {
            return SendAsync(HttpMethod.Put, "blocks/" + Escape(playerId), null, RetryMode.Safe, BlockList.From);
        }

        /// <summary>Unblocks a player (one not on the list changes nothing).</summary>
        public Task<BlockList> UnblockPlayerAsync(string playerId)
        {
            return SendAsync(HttpMethod.Delete, "blocks/" + Escape(playerId), null, RetryMode.Safe, BlockList.From);
        }
    }
}
