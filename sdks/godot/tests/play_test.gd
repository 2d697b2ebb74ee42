# The player client's loops against a scripted API (tests/stand_in_api.gd) and a scripted game
# server (Godot's WebSocketServer): the ticket heartbeat loop (its interval from the queue
# options, a failed beat reported, the end when the ticket leaves the queue or is finished, stop)
# and match play's rejoin (a dropped connection rejoined with a fresh assignment until ended; the
# end on 410 MATCH_ENDED, on 4410 and past the rejoin window). Run headless:
#   godot3-server --path sdks/godot -s tests/play_test.gd
# Prints each failed check and "godot-play: N passed, M failed" last.
extends "res://tests/checks.gd"

const PlayerClient = preload("res://addons/matchplane/player_client.gd")
const GameConnection = preload("res://addons/matchplane/game_connection.gd")
const StandInApi = preload("res://tests/stand_in_api.gd")
const HEARTBEAT = "POST /v1/queue/tickets/t-1/heartbeat"
const ASSIGNMENT = "GET /v1/matches/m-1/assignment"


# Polls the game stand-in every frame (the WebSocketServer is not a Node).
class GamePoller extends Node:
	var server: WebSocketServer

	func _process(_delta: float) -> void:
		server.poll()


var api = StandInApi.new()
var game := WebSocketServer.new()
var game_port := 0
var joins = []  # [peer id, join token] in order
var refused_tokens = {}  # join token -> the close code the game server refuses it with
var sections_done = 0  # a script error ends a section silently: each one counts its end


func _initialize() -> void:
	root.add_child(api)
	check(api.listen() > 0, "the stand-in API listens")
	game.connect("data_received", self, "_on_join_frame")
	for candidate in range(39200, 39300):
		if game.listen(candidate) == OK:
			game_port = candidate
			break
	check(game_port > 0, "the stand-in game server listens")
	var poller = GamePoller.new()
	poller.server = game
	root.add_child(poller)
	if api.port > 0 and game_port > 0:
		yield(heartbeat_tests(), "completed")
		yield(rejoin_tests(), "completed")
		check_equal(sections_done, 2, "every section ran to its end")
	game.stop()
	api.queue_free()
	report("godot-play")


func signed_in_client():
	var client = PlayerClient.new(api.url())
	client.session_token = "tok-1"
	client.player_id = "p-1"
	client.transport().retries = 0
	root.add_child(client)
	return client


func heartbeat_tests():
	var client = signed_in_client()
	api.answer("GET /v1/queue/options", 200, {"regions": ["eu-west"], "heartbeatIntervalMs": 30})
	api.answer(HEARTBEAT, 200, {"ticketId": "t-1", "state": "SEARCHING"})
	api.answer(HEARTBEAT, 503, {"code": "UNAVAILABLE"})
	api.answer(HEARTBEAT, 200, {"ticketId": "t-1", "state": "MATCHED"})
	api.answer(HEARTBEAT, 200, {"ticketId": "t-1", "state": "ASSIGNED"})
	var loop = client.start_heartbeats("t-1")
	var failures = []
	loop.connect("heartbeat_failed", self, "_collect", [failures])
	var ended = yield(end_of(loop), "completed")
	check(ended[0] == "left-queue" and ended[1].state == "ASSIGNED", "the loop ends once the ticket left the queue", str(ended))
	check_equal(api.find(HEARTBEAT).size(), 4, "the ticket is beaten while SEARCHING or MATCHED")
	check(failures.size() == 1 and failures[0].status == 503, "a failed beat is reported and the loop goes on", str(failures))
	check(api.find("GET /v1/queue/options").size() == 1 and ended[2] == 30, "the interval is the queue options' heartbeatIntervalMs", ended[2])
	check(api.find(HEARTBEAT)[0].headers.has("idempotency-key"), "each beat carries an Idempotency-Key")

	api.reset()
	api.answer(HEARTBEAT, 200, {"ticketId": "t-1", "state": "SEARCHING"})
	api.answer(HEARTBEAT, 409, {"code": "TICKET_FINISHED", "ticketState": "EXPIRED", "endReason": "SEARCH_TIMED_OUT"})
	loop = client.start_heartbeats("t-1", 20)
	ended = yield(end_of(loop), "completed")
	check(ended[0] == "finished" and ended[1].problem.endReason == "SEARCH_TIMED_OUT", "409 TICKET_FINISHED ends the loop with the problem", str(ended))
	check(api.find("GET /v1/queue/options").empty(), "an explicit interval needs no queue options")

	api.reset()
	api.answer(HEARTBEAT, 200, {"ticketId": "t-1", "state": "SEARCHING"})
	loop = client.start_heartbeats("t-1", 20)
	var stops = []
	loop.connect("ended", self, "_collect_end", [stops])
	yield(create_timer(0.2), "timeout")
	loop.stop()
	var beats = api.find(HEARTBEAT).size()
	yield(create_timer(0.2), "timeout")
	check(beats >= 2 and api.find(HEARTBEAT).size() <= beats + 1, "no beat follows stop()", beats)
	check(stops == ["stopped"], "a stopped loop says so", str(stops))
	client.queue_free()
	sections_done += 1


func rejoin_tests():
	var client = signed_in_client()
	api.answer(ASSIGNMENT, 200, assignment("join-1"))
	api.answer(ASSIGNMENT, 200, assignment("join-2"))
	var play = client.play_match("m-1")
	play.retry_delay_ms = 20
	var messages = []
	var rejoins = []
	play.connect("message", self, "_collect", [messages])
	play.connect("rejoined", self, "_collect", [rejoins])
	var joined = yield(play.start(), "completed")
	check(joined.ok and joins.size() == 1 and joins[0][1] == "join-1", "play starts with the assignment's join token", str([joined, joins]))
	send(joins[0][0], {"type": "tick", "seq": 1})
	yield(until_size(messages, 1), "completed")
	play.drop()
	yield(until_size(rejoins, 1), "completed")
	check(rejoins.size() == 1 and play.rejoins == 1 and joins.size() == 2 and joins[1][1] == "join-2",
		"a dropped connection is rejoined with the assignment fetched again", str(joins))
	check_equal(api.find(ASSIGNMENT).size(), 2, "the rejoin fetched the assignment once more")
	send(joins[1][0], {"type": "ended", "outcome": "COMPLETED", "winningTeam": 0})
	game.disconnect_peer(joins[1][0], 1000, "match over")
	var finished = yield(finish_of(play), "completed")
	check(finished.ok and finished.outcome == "COMPLETED" and finished.winning_team == 0 and finished.rejoins == 1,
		"play ends with the server's ended after the rejoin", str(finished))
	check(messages.size() == 2 and messages[0].type == "tick" and messages[1].type == "ended", "messages of both connections arrive in order", str(messages))

	api.reset()
	api.answer(ASSIGNMENT, 200, assignment("join-3"))
	api.answer(ASSIGNMENT, 410, {"code": "MATCH_ENDED", "matchState": "FAILED"})
	play = client.play_match("m-1")
	play.retry_delay_ms = 20
	yield(play.start(), "completed")
	game.disconnect_peer(joins[joins.size() - 1][0], 1001, "going away")
	finished = yield(finish_of(play), "completed")
	check(not finished.ok and finished.status == 410 and finished.rejoins == 0, "a match that ended is not rejoined", str(finished))

	api.reset()
	api.answer(ASSIGNMENT, 200, assignment("join-4"))
	play = client.play_match("m-1")
	yield(play.start(), "completed")
	game.disconnect_peer(joins[joins.size() - 1][0], GameConnection.JOINING_CLOSED, "abandoned")
	finished = yield(finish_of(play), "completed")
	check(not finished.ok and finished.code == GameConnection.JOINING_CLOSED and api.find(ASSIGNMENT).size() == 1,
		"a player sent away with 4410 does not try again", str(finished))

	api.reset()
	api.answer(ASSIGNMENT, 200, assignment("join-5"))
	api.answer(ASSIGNMENT, 200, assignment("refused-once"))
	api.answer(ASSIGNMENT, 200, assignment("join-6"))
	refused_tokens["refused-once"] = GameConnection.INVALID_TOKEN
	play = client.play_match("m-1")
	play.retry_delay_ms = 20
	yield(play.start(), "completed")
	play.drop()
	var back = yield(signal_of(play, "rejoined"), "completed")
	check(back == play.connection and joins[joins.size() - 1][1] == "join-6" and api.find(ASSIGNMENT).size() == 3,
		"a refused rejoin (a token from before the leave) is tried again with a new assignment", str(joins))
	play.stop()

	api.reset()
	api.answer(ASSIGNMENT, 200, assignment("join-7"))
	api.answer(ASSIGNMENT, 503, {"code": "UNAVAILABLE"})
	play = client.play_match("m-1")
	play.retry_delay_ms = 20
	play.rejoin_window_ms = 300
	yield(play.start(), "completed")
	play.drop()
	finished = yield(finish_of(play), "completed")
	check(not finished.ok and finished.status == 503 and api.find(ASSIGNMENT).size() > 2 and finished.rejoins == 0,
		"past rejoin_window_ms play gives up with the last failure", str(finished))
	client.queue_free()
	sections_done += 1


func assignment(token: String) -> Dictionary:
	return {"matchId": "m-1", "endpoint": "127.0.0.1:%d" % game_port, "joinToken": token, "team": 0}


func send(peer_id: int, message: Dictionary) -> void:
	var peer = game.get_peer(peer_id)
	peer.set_write_mode(WebSocketPeer.WRITE_MODE_TEXT)
	peer.put_packet(to_json(message).to_utf8())


# The game stand-in admits every join but the refused tokens'.
func _on_join_frame(id: int) -> void:
	var frame = JSON.parse(game.get_peer(id).get_packet().get_string_from_utf8()).result
	if typeof(frame) != TYPE_DICTIONARY or frame.get("type") != "join":
		return
	joins.append([id, frame.token])
	if refused_tokens.has(frame.token):
		game.disconnect_peer(id, refused_tokens[frame.token], "refused")
	else:
		send(id, {"type": "joined", "playerId": "p-1", "team": 0})


# A loop's ended arguments and its interval then [why, detail, interval_ms] (the loop frees itself
# once ended), or ["none", null, 0] when it did not end within 5 s (a hang would stop the suite
# from reporting).
func end_of(loop) -> Array:
	var ends = []
	loop.connect("ended", self, "_collect_end_of", [loop, ends])
	yield(until_size(ends, 1), "completed")
	return ends[0] if ends.size() > 0 else ["none", null, 0]


func finish_of(play) -> Dictionary:
	var result = yield(signal_of(play, "finished"), "completed")
	return result if result != null else {"ok": false, "code": "NOT_FINISHED", "status": 0, "rejoins": -1}


# The first argument of the node's one-argument signal, or null within 5 s.
func signal_of(node, name: String):
	var seen = []
	node.connect(name, self, "_collect", [seen])
	yield(until_size(seen, 1), "completed")
	return seen[0] if seen.size() > 0 else null


func until_size(items: Array, wanted: int) -> void:
	var deadline = OS.get_ticks_msec() + 5000
	yield(create_timer(0.01), "timeout")
	while items.size() < wanted and OS.get_ticks_msec() < deadline:
		yield(create_timer(0.01), "timeout")


func _collect(item, into: Array) -> void:
	into.append(item)


func _collect_end_of(why: String, detail, loop, into: Array) -> void:
	into.append([why, detail, loop.interval_ms])


func _collect_end(why: String, _detail, into: Array) -> void:
	into.append(why)
