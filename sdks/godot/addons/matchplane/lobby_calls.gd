# A player's lobbies (custom games, /v1/lobbies; the TypeScript SDK's LobbyCalls, libs/sdk
# player-lobbies.ts): `client.lobbies.create_lobby(mode)` answers the invite code (shown once),
# others join_lobby(code), the owner kicks, set_teams and starts; the start creates the match, and
# every member follows its own ticket (wait_for_start) to the assignment like a queued player.
# Calls are coroutines answering the player client's {ok, status, body} / {ok: false, code, ...};
# the body is a LobbyResponse (libs/contracts player-api.ts). Refusals are LOBBY_* codes.
extends Reference

const ApiTransport = preload("res://addons/matchplane/api_transport.gd")

var _client  # player_client.gd: its session token and transport


func _init(client) -> void:
	_client = client


# options: {size, region, ranked}, each optional. Retried with one Idempotency-Key, so a lost
# answer is replayed, invite code included.
func create_lobby(mode: String, options := {}) -> Dictionary:
	var body = {"mode": mode}
	for name in ["size", "region", "ranked"]:
		if options.has(name):
			body[name] = options[name]
	var answer = yield(_client._send(HTTPClient.METHOD_POST, "lobbies", to_json(body), ApiTransport.RETRY_IDEMPOTENCY_KEY), "completed")
	return answer


# Joining the lobby one is in already answers it again, so a retry is safe.
func join_lobby(invite_code: String) -> Dictionary:
	var body = to_json({"inviteCode": invite_code})
	var answer = yield(_client._send(HTTPClient.METHOD_POST, "lobbies/join", body, ApiTransport.RETRY_SAFE), "completed")
	return answer


# This player's lobby (404 LOBBY_NOT_FOUND: none); once STARTED its matchId and each member's ticketId.
func lobby() -> Dictionary:
	var answer = yield(_client._send(HTTPClient.METHOD_GET, "lobbies/current", "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# Leaves the lobby (204; the owner leaving closes it). Sent once: a repeat of a leave that went
# through is LOBBY_NOT_FOUND.
func leave_lobby() -> Dictionary:
	var answer = yield(_client._send(HTTPClient.METHOD_POST, "lobbies/current/leave", "", ApiTransport.RETRY_NEVER), "completed")
	return answer


# The owner removes a member. Sent once: a repeat would be refused (no longer a member).
func kick(member_id: String) -> Dictionary:
	var body = to_json({"playerId": member_id})
	var answer = yield(_client._send(HTTPClient.METHOD_POST, "lobbies/current/kick", body, ApiTransport.RETRY_NEVER), "completed")
	return answer


# The owner arranges the teams: team i holds teams[i]'s player ids, every member named once, each
# team no larger than its size (team_sizes). Setting the same teams twice is harmless: retried.
func set_teams(teams: Array) -> Dictionary:
	var body = to_json({"teams": teams})
	var answer = yield(_client._send(HTTPClient.METHOD_POST, "lobbies/current/teams", body, ApiTransport.RETRY_SAFE), "completed")
	return answer


# The owner starts the lobby: the answer is STARTED, with the match and each member's ticket. Sent
# once: a repeat of a start that went through is LOBBY_ALREADY_STARTED.
func start() -> Dictionary:
	var answer = yield(_client._send(HTTPClient.METHOD_POST, "lobbies/current/start", "", ApiTransport.RETRY_NEVER), "completed")
	return answer


# A member waits for the owner's start: polls the lobby until it is STARTED with this player's
# ticket; answers {ok: true, body: {ticketId, matchId}}, the lobby's failure, or TIMEOUT.
func wait_for_start(timeout_ms := 30000, poll_ms := 500) -> Dictionary:
	var read = funcref(self, "lobby")
	var answer = yield(_client.wait_for_own_ticket(read, "STARTED", "the lobby was not started", timeout_ms, poll_ms), "completed")
	return answer


# Each team's size in team order (`hunt:4+1`: [4, 1]) as ints; from teamSize and teamCount for an
# answer without teamSizes.
static func team_sizes(lobby_body: Dictionary) -> Array:
	var sizes = []
	if typeof(lobby_body.get("teamSizes")) == TYPE_ARRAY:
		for size in lobby_body.teamSizes:
			sizes.append(ApiTransport.as_int(size))
		return sizes
	for _team in range(ApiTransport.as_int(lobby_body.get("teamCount"))):
		sizes.append(ApiTransport.as_int(lobby_body.get("teamSize")))
	return sizes


# The members' player ids by the team the owner put them in (one Array per team of team_sizes),
# and those not placed yet under "unplaced": {teams: [[ids]], unplaced: [ids]}.
static func members_by_team(lobby_body: Dictionary) -> Dictionary:
	var teams = []
	for _size in team_sizes(lobby_body):
		teams.append([])
	var unplaced = []
	for member in lobby_body.get("members", []):
		var team = member.get("team")
		if typeof(team) in [TYPE_REAL, TYPE_INT] and int(team) >= 0 and int(team) < teams.size():
			teams[int(team)].append(member.playerId)
		else:
			unplaced.append(member.playerId)
	return {"teams": teams, "unplaced": unplaced}
