# The live journey's steps before the queue with --lobby (live/live_journey.gd): against the real
# API, player a creates a lobby for the mode, b joins it with the invite code (handed over here, as
# a player would by chat), a arranges the teams (read back by team through teamSizes), kicks b and
# leaves, closing the lobby; a blocks b and unblocks it (the block list answered each time), then
# avoids b, reads its avoid list, is refused avoiding itself (400 VALIDATION_FAILED) and a player
# nobody is (404 PLAYER_NOT_FOUND), and stops avoiding b. Both are out of any lobby and blocked or
# avoided by nobody afterwards, so they queue and are matched as usual.
extends Reference

const LobbyCalls = preload("res://addons/matchplane/lobby_calls.gd")
const STEP_TIMEOUT_MS = 60000
const NOBODYS_ID = "00000000-0000-4000-8000-000000000000"

var journey  # live_journey.gd: its checks and timers
var invite_code := ""


func _init(live_journey) -> void:
	journey = live_journey


# Runs a's or b's side; answers when the player may queue.
func play(client, name: String, mode: String) -> void:
	if name == "a":
		yield(_own(client, mode), "completed")
	else:
		yield(_join(client), "completed")


func _own(client, mode: String) -> void:
	var created = yield(client.lobbies.create_lobby(mode), "completed")
	journey.check(created.ok and typeof(created.body.get("inviteCode")) == TYPE_STRING and created.body.state == "OPEN",
		"a creates a lobby and gets its invite code", created.get("message", ""))
	if not created.ok:
		return
	invite_code = created.body.inviteCode
	var lobby = yield(_until_members(client, 2), "completed")
	if lobby == null:
		journey.check(false, "b joins a's lobby")
		return
	var other = lobby.members[1].playerId
	var sizes = LobbyCalls.team_sizes(lobby)
	journey.check(sizes == [1, 1], "the lobby's teamSizes are the mode's", str(sizes))
	var arranged = yield(client.lobbies.set_teams([[other], [client.player_id]]), "completed")
	var teams = LobbyCalls.members_by_team(arranged.body) if arranged.ok else {}
	journey.check(arranged.ok and teams.teams == [[other], [client.player_id]] and teams.unplaced.empty(),
		"a puts b in team 0 and itself in team 1", "%s %s" % [arranged.get("message", ""), str(teams)])
	var kicked = yield(client.lobbies.kick(other), "completed")
	journey.check(kicked.ok and kicked.body.members.size() == 1, "a kicks b out of the lobby", kicked.get("message", ""))
	var left = yield(client.lobbies.leave_lobby(), "completed")
	journey.check(left.ok and left.status == 204, "a leaves the lobby, closing it", left.get("message", ""))
	var gone = yield(client.lobbies.lobby(), "completed")
	journey.check(gone.code == "LOBBY_NOT_FOUND", "a is in no lobby any more", gone.get("code", "ok"))

	var blocked = yield(client.block_player(other), "completed")
	journey.check(blocked.ok and blocked.body.blocked.size() == 1 and blocked.body.blocked[0].playerId == other,
		"a blocks b: b is on a's block list", blocked.get("message", ""))
	var unblocked = yield(client.unblock_player(other), "completed")
	var listed = yield(client.block_list(), "completed")
	journey.check(unblocked.ok and listed.ok and listed.body.blocked.empty() and listed.body.maxEntries > 0,
		"a unblocks b: the block list is empty again", "%s %s" % [unblocked.get("message", ""), str(listed.body)])
	yield(_avoid(client, other), "completed")


func _avoid(client, other: String) -> void:
	var avoided = yield(client.avoid_player(other), "completed")
	journey.check(avoided.ok and avoided.body.avoided.size() == 1 and avoided.body.avoided[0].playerId == other,
		"a avoids b: b is on a's avoid list", avoided.get("message", ""))
	var listed = yield(client.avoid_list(), "completed")
	journey.check(listed.ok and listed.body.avoided.size() == 1 and listed.body.avoided[0].playerId == other and listed.body.maxEntries > 0,
		"a reads its avoid list: b", str(listed.body))
	var itself = yield(client.avoid_player(client.player_id), "completed")
	journey.check(not itself.ok and itself.status == 400 and itself.code == "VALIDATION_FAILED", "a may not avoid itself (400 VALIDATION_FAILED)",
		str(itself.get("code")))
	var nobody = yield(client.avoid_player(NOBODYS_ID), "completed")
	journey.check(not nobody.ok and nobody.status == 404 and nobody.code == "PLAYER_NOT_FOUND", "a may not avoid a player nobody is (404 PLAYER_NOT_FOUND)",
		str(nobody.get("code")))
	var removed = yield(client.unavoid_player(other), "completed")
	var after = yield(client.avoid_list(), "completed")
	journey.check(removed.ok and removed.body.avoided.empty() and after.ok and after.body.avoided.empty(),
		"a stops avoiding b: the avoid list is empty again", "%s %s" % [removed.get("message", ""), str(after.body)])


func _join(client) -> void:
	var deadline = OS.get_ticks_msec() + STEP_TIMEOUT_MS
	while invite_code == "" and OS.get_ticks_msec() < deadline:
		yield(journey.create_timer(0.05), "timeout")
	var joined = yield(client.lobbies.join_lobby(invite_code), "completed")
	journey.check(joined.ok and joined.body.members.size() == 2, "b joins a's lobby with the invite code", joined.get("message", ""))
	if not joined.ok:
		return
	# Kicked by a: the lobby is gone for b.
	while OS.get_ticks_msec() < deadline:
		var current = yield(client.lobbies.lobby(), "completed")
		if current.get("code") == "LOBBY_NOT_FOUND":
			return
		yield(journey.create_timer(0.1), "timeout")
	journey.check(false, "b is kicked out of a's lobby")


# Polls the lobby until it has `count` members: the LobbyResponse, or null past the step timeout.
func _until_members(client, count: int):
	var deadline = OS.get_ticks_msec() + STEP_TIMEOUT_MS
	while OS.get_ticks_msec() < deadline:
		yield(journey.create_timer(0.1), "timeout")
		var current = yield(client.lobbies.lobby(), "completed")
		if current.ok and current.body.members.size() >= count:
			return current.body
	return null
