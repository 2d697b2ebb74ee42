# The GDScript player client (Godot 3) with the API's conventions (bearer session token,
# Idempotency-Key on mutations, retries of network errors and 5xx as api_transport.gd says,
# problem+json errors as {ok: false, status, code, message}): guest session, queue options, latency
# probes (at the region's probe edge, else API-hosted), queue tickets, parties, lobbies
# (client.lobbies, lobby_calls.gd), block and avoid lists, the match history and assignment, the ready check,
# the notification socket (subscribe) and joining the game server (join_match). Calls are
# coroutines: `var answer = yield(client.call(...), "completed")` answers {ok, status, body
# (parsed JSON)}. Given several API replicas, HTTP calls and the socket fail over together.
# Add the client to the scene tree before calling it.
extends Node

const ApiTransport = preload("res://addons/matchplane/api_transport.gd")
const NotificationSubscription = preload("res://addons/matchplane/notification_subscription.gd")
const GameConnection = preload("res://addons/matchplane/game_connection.gd")
const TicketHeartbeats = preload("res://addons/matchplane/ticket_heartbeats.gd")
const MatchPlay = preload("res://addons/matchplane/match_play.gd")
const LobbyCalls = preload("res://addons/matchplane/lobby_calls.gd")
const EdgeProber = preload("res://addons/matchplane/edge_prober.gd")
const TERMINAL_MATCH_STATES = ["COMPLETED", "FAILED", "CANCELLED"]

var session_token := ""
var player_id := ""
var last_queue_options = null  # the last queue_options() body: where probe() finds the regions' edges
# Lobbies (custom games): create_lobby, join_lobby, lobby, leave_lobby, kick, set_teams, start,
# wait_for_start (lobby_calls.gd).
var lobbies

var _api
var _edges  # edge_prober.gd


# base_urls: where the API is served, e.g. "https://mm.example.com" (the /v1 prefix is added), or
# every replica of it in order of preference (an Array, or "a,b"): a call that finds its replica
# unreachable (or answering 502/503/504) is retried on the next one, and the notification socket
# follows the same list.
func _init(base_urls) -> void:
	_api = ApiTransport.new(base_urls)
	add_child(_api)
	lobbies = LobbyCalls.new(self)
	_edges = EdgeProber.new(_api, funcref(self, "_record_measurement"))


# The current replica's base URL with its /v1/ prefix.
func api_url() -> String:
	return _api.api_url


# The HTTP transport, whose retry settings (retries, base_delay_ms, retry_rate_limited, ...) apply
# to every call of this client.
func transport() -> Node:
	return _api


# Signs in (a new guest without arguments; a guest's deviceSecret resumes it) and keeps the token.
func create_session(provider := "", credential := "") -> Dictionary:
	var body = {}
	if provider != "":
		body.provider = provider
	if credential != "":
		body.credential = credential
	# Sent without the old token: signing in must not depend on a session that may have expired.
	var answer = yield(_api.send(HTTPClient.METHOD_POST, "sessions", to_json(body), ApiTransport.RETRY_IDEMPOTENCY_KEY, ""), "completed")
	if answer.ok:
		session_token = answer.body.token
		player_id = answer.body.playerId
	return answer


# Ends the session server-side; a 401 means it is already gone.
func end_session() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_DELETE, "sessions/current", "", ApiTransport.RETRY_SAFE), "completed")
	session_token = ""
	if answer.status == 401:
		answer.ok = true
	return answer


# What this player may queue for, the regions, their probe edges and heartbeatIntervalMs.
func queue_options() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_GET, "queue/options", "", ApiTransport.RETRY_SAFE), "completed")
	if answer.ok:
		last_queue_options = answer.body
	return answer


# The first http(s) edge the queue options list for the region, or "".
static func http_edge_of(queue_options, region: String) -> String:
	if typeof(queue_options) != TYPE_DICTIONARY or typeof(queue_options.get("probeEdges")) != TYPE_DICTIONARY:
		return ""
	var urls = queue_options.probeEdges.get(region)
	if typeof(urls) != TYPE_ARRAY:
		return ""
	for url in urls:
		if typeof(url) == TYPE_STRING and (url.begins_with("http://") or url.begins_with("https://")):
			return url
	return ""


# Measures the round trip to a region `samples` times (1 to EdgeProber.MAX_SAMPLES, else
# INVALID_SAMPLES before any request); answers the API's last answer (its estimateMs covers the
# kept samples). Where the last queue options list an http(s) edge for the region, the samples are
# taken there in rounds (edge_prober.gd, docs/PROBES.md) and the signed measurements go to the API
# after each chain, never while a sample is on the wire; a chain ends once it is record_within_ms
# old (positive, else INVALID_RECORD_WITHIN_MS before any request; keep it below the API's
# PROBE_MEASUREMENT_MAX_AGE_MS). Else challenges and answers go to the API. Nothing here times
# anything: the server's clock does.
func probe(region: String, samples := 3, record_within_ms := EdgeProber.DEFAULT_RECORD_WITHIN_MS) -> Dictionary:
	# Checked here, the one way in (probe_all comes through here too), whichever path follows.
	var problem = EdgeProber.samples_problem(samples)
	var code = "INVALID_SAMPLES" if problem != "" else "INVALID_RECORD_WITHIN_MS"
	if problem == "":
		problem = EdgeProber.record_within_problem(record_within_ms)
	if problem != "":
		yield(get_tree(), "idle_frame")
		return ApiTransport.failure(0, code, problem, null)
	var edge = http_edge_of(last_queue_options, region)
	if edge != "":
		var measured = yield(_edges.probe(edge, player_id, region, samples, record_within_ms), "completed")
		return measured
	var last = null
	var path = "probes/" + region.percent_encode()
	for _sample in range(samples):
		last = yield(_send(HTTPClient.METHOD_POST, path + "/challenge", "", ApiTransport.RETRY_IDEMPOTENCY_KEY), "completed")
		if last.ok:
			var answer = {"challengeId": last.body.challengeId, "nonce": last.body.nonce}
			last = yield(_send(HTTPClient.METHOD_POST, path + "/answer", to_json(answer), ApiTransport.RETRY_NEVER), "completed")
		if not last.ok:
			break
	return last


# An edge's signed measurement, handed to the API unchanged and sent once.
func _record_measurement(measurement: String) -> Dictionary:
	var accepted = yield(_send(HTTPClient.METHOD_POST, "probes/measurements", measurement, ApiTransport.RETRY_NEVER), "completed")
	return accepted


# Probes each region in turn (so probes do not skew each other), by default every region of the
# queue options (fetched anew). Answers {measured: {region: answer body}, failed: {region: failure}}.
func probe_all(regions = null, samples := 3, record_within_ms := EdgeProber.DEFAULT_RECORD_WITHIN_MS) -> Dictionary:
	var result = {"measured": {}, "failed": {}}
	var options = yield(queue_options(), "completed")
	if not options.ok:
		for region in (regions if regions != null else []):
			result.failed[region] = options
		return result
	for region in (regions if regions != null else options.body.regions):
		var answer = yield(probe(region, samples, record_within_ms), "completed")
		if answer.ok:
			result.measured[region] = answer.body
		else:
			result.failed[region] = answer
	return result


# attributes: the ticket's attributes (a Dictionary) or null.
func create_ticket(mode: String, attributes = null) -> Dictionary:
	var body = {"mode": mode}
	if attributes != null:
		body.attributes = attributes
	var answer = yield(_send(HTTPClient.METHOD_POST, "queue/tickets", to_json(body), ApiTransport.RETRY_IDEMPOTENCY_KEY), "completed")
	return answer


func ticket(ticket_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_GET, "queue/tickets/" + ticket_id.percent_encode(), "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# Tells the server the player still waits; a ticket without heartbeats expires.
func heartbeat(ticket_id: String) -> Dictionary:
	var path = "queue/tickets/" + ticket_id.percent_encode() + "/heartbeat"
	var answer = yield(_send(HTTPClient.METHOD_POST, path, "", ApiTransport.RETRY_IDEMPOTENCY_KEY), "completed")
	return answer


# Heartbeats the ticket every interval_ms (-1: the queue options' heartbeatIntervalMs) until
# stopped, until it leaves SEARCHING/MATCHED or until the server no longer takes its heartbeats:
# a ticket_heartbeats.gd node (stop(), signals heartbeat_failed and ended(why, detail)).
func start_heartbeats(ticket_id: String, interval_ms := -1) -> Node:
	var loop = TicketHeartbeats.new(self, ticket_id, interval_ms)
	add_child(loop)
	return loop


func cancel_ticket(ticket_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_DELETE, "queue/tickets/" + ticket_id.percent_encode(), "", ApiTransport.RETRY_IDEMPOTENCY_KEY), "completed")
	return answer


# ---- Parties: the leader creates one (its invite code in the answer), others join with the code,
# the leader queues the whole party (one ticket per member, sharing partyTicketId).

# A party led by this player; answers its inviteCode (only this once: the server keeps a hash).
func create_party() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_POST, "parties", "", ApiTransport.RETRY_IDEMPOTENCY_KEY), "completed")
	return answer


# Joins by the leader's invite code. Retried without a key: the API answers a member's repeated
# join with the party.
func join_party(invite_code: String) -> Dictionary:
	var body = to_json({"inviteCode": invite_code})
	var answer = yield(_send(HTTPClient.METHOD_POST, "parties/join", body, ApiTransport.RETRY_SAFE), "completed")
	return answer


# This player's party (404 PARTY_NOT_FOUND: none); members carry their ticketId once queued.
func party() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_GET, "parties/current", "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# A member leaves (204). Sent once: a repeat of a leave that went through is PARTY_NOT_FOUND.
func leave_party() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_POST, "parties/current/leave", "", ApiTransport.RETRY_NEVER), "completed")
	return answer


# The leader ends the party (204). Sent once, like leave_party.
func disband_party() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_DELETE, "parties/current", "", ApiTransport.RETRY_NEVER), "completed")
	return answer


# The leader queues the party for `mode`: {partyTicketId, partyId, mode, tickets (one per member)}.
# Each member then heartbeats its own ticket (wait_for_party_ticket finds it). attributes: every
# member's, as create_ticket's; member_roles: {player id: [roles]}, a member's own roles in a mode
# with a roles rule (a member left out plays the roles of `attributes`).
func enqueue_party(mode: String, attributes = null, member_roles = null) -> Dictionary:
	var body = {"mode": mode}
	if attributes != null:
		body.attributes = attributes
	if member_roles != null:
		body.memberRoles = member_roles
	var answer = yield(_send(HTTPClient.METHOD_POST, "queue/party-tickets", to_json(body), ApiTransport.RETRY_IDEMPOTENCY_KEY), "completed")
	return answer


# A member's side of enqueue_party: polls the party until this player's member entry has a ticket;
# answers {ok: true, body: {ticketId}}, the party's failure, or TIMEOUT after timeout_ms.
func wait_for_party_ticket(timeout_ms := 30000, poll_ms := 500) -> Dictionary:
	var answer = yield(wait_for_own_ticket(funcref(self, "party"), "", "the party was not queued", timeout_ms, poll_ms), "completed")
	return answer


# Polls `read` (a FuncRef to a call answering a party or a lobby) until the answer is in `state`
# ("": any) and this player's member entry has a ticket: {ok: true, body: {ticketId, and the
# answer's matchId if it has one}}, read's failure, or TIMEOUT ("<not_done> within N ms").
func wait_for_own_ticket(read: FuncRef, state: String, not_done: String, timeout_ms: int, poll_ms: int) -> Dictionary:
	var deadline = OS.get_ticks_msec() + timeout_ms
	while true:
		var current = yield(read.call_func(), "completed")
		if not current.ok:
			return current
		var members = current.body.get("members", []) if state == "" or current.body.get("state") == state else []
		for member in members:
			if member.get("playerId") == player_id and typeof(member.get("ticketId")) == TYPE_STRING:
				var found = {"ticketId": member.ticketId}
				if typeof(current.body.get("matchId")) == TYPE_STRING:
					found.matchId = current.body.matchId
				return {"ok": true, "status": current.status, "body": found}
		if OS.get_ticks_msec() + poll_ms > deadline:
			return ApiTransport.failure(0, "TIMEOUT", "%s within %d ms" % [not_done, timeout_ms], null)
		yield(get_tree().create_timer(poll_ms / 1000.0), "timeout")
	return null


# ---- Block lists: the matcher never puts a player in one match with one it blocked, or one that
# blocked it. Each call answers the list {blocked: [{playerId, blockedAt}], maxEntries}; all are
# idempotent (a repeat changes nothing), so retried without a key.

func block_list() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_GET, "blocks", "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# A full list is 409 BLOCK_LIST_FULL.
func block_player(other_player_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_PUT, "blocks/" + other_player_id.percent_encode(), "", ApiTransport.RETRY_SAFE), "completed")
	return answer


func unblock_player(other_player_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_DELETE, "blocks/" + other_player_id.percent_encode(), "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# ---- Avoid lists: the matcher puts a player in one match with one it avoids, or one that avoids
# it, only when nothing else fits. Each call answers the list {avoided: [{playerId, avoidedAt}],
# maxEntries}; idempotent like the block list's, so retried without a key.

func avoid_list() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_GET, "avoids", "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# A blocked player moves to this list. A full list is 409 AVOID_LIST_FULL.
func avoid_player(other_player_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_PUT, "avoids/" + other_player_id.percent_encode(), "", ApiTransport.RETRY_SAFE), "completed")
	return answer


func unavoid_player(other_player_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_DELETE, "avoids/" + other_player_id.percent_encode(), "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# ---- The ready check of a match AWAITING_ACCEPTANCE (the subscription's ready_check signal):
# {matchId, answer, matchState}. Idempotent on the server, so a lost answer is retried. 409
# NOT_AWAITING_ACCEPTANCE: the match moved on; ACCEPTANCE_ALREADY_ANSWERED: an answer is final.

# The last player to accept starts the match's allocation (matchState ALLOCATING).
func accept_match(match_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_POST, "matches/%s/accept" % match_id.percent_encode(), "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# Cancels the match; this player gets the no-show cooldown.
func decline_match(match_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_POST, "matches/%s/decline" % match_id.percent_encode(), "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# Where and how to join (endpoint, join token). Before ASSIGNMENT_READY the API answers 409
# ASSIGNMENT_NOT_READY, after the match 410 MATCH_ENDED.
func assignment(match_id: String) -> Dictionary:
	var path = "matches/" + match_id.percent_encode() + "/assignment"
	var answer = yield(_send(HTTPClient.METHOD_GET, path, "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# A match's history after revision `after` and its current state (what the socket would replay).
func match_events(match_id: String, after := 0) -> Dictionary:
	var path = "matches/%s/events?after=%d" % [match_id.percent_encode(), after]
	var answer = yield(_send(HTTPClient.METHOD_GET, path, "", ApiTransport.RETRY_SAFE), "completed")
	return answer


# Polls the assignment while it answers 409 ASSIGNMENT_NOT_READY; fails with code
# ASSIGNMENT_UNAVAILABLE as soon as the match has ended, TIMEOUT after timeout_ms.
func wait_for_assignment(match_id: String, timeout_ms := 30000, poll_ms := 250) -> Dictionary:
	var deadline = OS.get_ticks_msec() + timeout_ms
	var last_revision = 0
	while true:
		var answer = yield(assignment(match_id), "completed")
		if answer.ok or not answer.code in ["ASSIGNMENT_NOT_READY", "MATCH_ENDED"]:
			return answer
		if answer.code == "MATCH_ENDED":
			return ApiTransport.failure(410, "ASSIGNMENT_UNAVAILABLE", "match %s has ended" % match_id, answer.problem)
		# Not ready: is the match still on its way, or over? Only new events are fetched.
		var events = yield(match_events(match_id, last_revision), "completed")
		if not events.ok:
			return events
		last_revision = max(last_revision, ApiTransport.as_int(events.body.revision))
		if events.body.state in TERMINAL_MATCH_STATES:
			return ApiTransport.failure(410, "ASSIGNMENT_UNAVAILABLE", "match %s is %s" % [match_id, events.body.state], null)
		if OS.get_ticks_msec() + poll_ms > deadline:
			return ApiTransport.failure(0, "TIMEOUT", "match %s had no assignment within %d ms" % [match_id, timeout_ms], null)
		yield(get_tree().create_timer(poll_ms / 1000.0), "timeout")
	return null


# Follows this player's matches over the notification socket, reading the session token at every
# (re)connect; seen_before: {match id: revision} kept from an earlier run. See notification_subscription.gd.
func subscribe(seen_before := {}) -> Node:
	# The HTTP calls' replica list: a replica one of them found dead is left by both.
	var subscription = NotificationSubscription.new(_api.endpoints, funcref(self, "_current_token"), seen_before)
	add_child(subscription)
	return subscription


# Joins the assignment's game server: a GameConnection in the tree; yield on its join().
func join_match(assignment_body: Dictionary, scheme := "ws") -> Node:
	var connection = GameConnection.new(assignment_body.endpoint, assignment_body.joinToken, scheme)
	add_child(connection)
	return connection


# Plays the match and rejoins after a dropped game connection: a match_play.gd node; yield on its
# start() (the assignment and the first join), then follow its message, rejoined and finished.
func play_match(match_id: String) -> Node:
	var play = MatchPlay.new(self, match_id)
	add_child(play)
	return play


func _current_token() -> String:
	return session_token


# One call with this client's session token (lobby_calls.gd sends through it too).
func _send(method: int, path: String, body: String, retry_mode: String) -> Dictionary:
	var answer = yield(_api.send(method, path, body, retry_mode, session_token), "completed")
	return answer
