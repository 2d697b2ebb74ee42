# The notification socket and the game join against a scripted WebSocket server (Godot's
# WebSocketServer on a local port): reconnect and resume, a gap filled by the replay, the end on
# 4401, a silent connection dropped past the idle limit; joined, the game's messages and a refused
# join. Run headless:
#   godot3-server --path sdks/godot -s tests/socket_test.gd
# Prints each failed check and "godot-sockets: N passed, M failed" last.
extends "res://tests/checks.gd"

const NotificationSubscription = preload("res://addons/matchplane/notification_subscription.gd")
const Frames = preload("res://tests/notification_frames.gd")
const GameConnection = preload("res://addons/matchplane/game_connection.gd")
const STEP_MS = 5000

var server := WebSocketServer.new()
var port := 0
var peers = []  # connected peer ids, in order
var protocols = []  # the subprotocol each was accepted with
var frames = []  # [peer id, parsed frame] from the clients
var events = []
var dones = []


func _initialize() -> void:
	server.connect("client_connected", self, "_on_client")
	server.connect("data_received", self, "_on_frame")
	for candidate in range(39000, 39100):
		if server.listen(candidate, PoolStringArray([NotificationSubscription.SUBPROTOCOL])) == OK:
			port = candidate
			break
	check(port > 0, "the stand-in server listens")
	if port > 0:
		yield(notification_tests(), "completed")
		# The game server's join protocol has no subprotocol.
		server.stop()
		check(server.listen(port) == OK, "the stand-in game server listens")
		yield(game_tests(), "completed")
		server.stop()
		check(server.listen(port, PoolStringArray([NotificationSubscription.SUBPROTOCOL])) == OK, "the stand-in server listens again")
		yield(idle_tests(), "completed")
	server.stop()
	report("godot-sockets")


func notification_tests():
	var subscription = NotificationSubscription.new("http://127.0.0.1:%d" % port, funcref(self, "token"))
	subscription.base_delay_ms = 20
	subscription.connect("event", self, "_collect", [events])
	subscription.connect("done", self, "_collect", [dones])
	root.add_child(subscription)
	check(yield(until(peers, 1), "completed"), "the subscription connects")
	check(protocols == [NotificationSubscription.SUBPROTOCOL], "the server selects the notification subprotocol", str(protocols))
	send(peers[0], {"type": "ready", "playerId": "p"})
	send(peers[0], Frames.event(1))
	send(peers[0], Frames.event(2))
	check(yield(until(events, 2), "completed"), "live events are delivered")
	server.disconnect_peer(peers[0], 1001, "going away")
	check(yield(until(peers, 2), "completed"), "the subscription reconnects after the server went away")
	check(yield(until(frames, 1), "completed") and frames[0][0] == peers[1] and frames[0][1].matches.m == 2.0,
		"the reconnect resumes from the last revision seen", str(frames))
	send(peers[1], {"type": "ready", "playerId": "p"})
	send(peers[1], Frames.event(4))
	check(yield(until(frames, 2), "completed") and frames[1][1].matches.m == 2.0, "a gap asks for the replay", str(frames))
	send(peers[1], Frames.event(3))
	send(peers[1], Frames.event(4))
	yield(until(events, 4), "completed")
	yield(until(events, 5), "completed")  # a duplicate would show within this wait
	check(Frames.revisions(events) == [1, 2, 3, 4], "each revision is delivered once, in order, across the reconnect and the gap", str(Frames.revisions(events)))
	server.disconnect_peer(peers[1], 4401, "session expired")
	check(yield(until(dones, 1), "completed") and dones[0] == "unauthenticated: session expired", "4401 ends the subscription", str(dones))
	yield(until(peers, 3), "completed")
	check(peers.size() == 2, "no reconnect follows a 4401")
	subscription.queue_free()


# The server announces a 100 ms heartbeat and then stays silent (Godot's WebSocketServer sends no
# pings): past 2.5 intervals the subscription takes the connection for dead, reconnects and resumes.
func idle_tests():
	var subscription = NotificationSubscription.new("http://127.0.0.1:%d" % port, funcref(self, "token"), {"m": 7})
	subscription.base_delay_ms = 20
	subscription.idle_timeout_ms = NotificationSubscription.IDLE_FROM_ANNOUNCED
	var reconnects = []
	subscription.connect("reconnecting", self, "_collect_reconnect", [reconnects])
	var first_peer = peers.size()
	var first_frame = frames.size()
	root.add_child(subscription)
	check(yield(until(frames, first_frame + 1), "completed"), "the idle-checked subscription connects and resumes")
	check_equal(subscription.idle_limit_ms(), 75000, "before ready the limit follows the server's default interval")
	send(peers[first_peer], {"type": "ready", "playerId": "p", "bufferLimit": 10, "heartbeatIntervalMs": 100})
	check(yield(until(reconnects, 1), "completed"), "a connection silent past the idle limit is dropped")
	check(reconnects.size() > 0 and reconnects[0][0] == 1006 and reconnects[0][1] == "no frame within 250 ms",
		"the drop says why (2.5 announced intervals)", str(reconnects))
	check(yield(until(frames, first_frame + 2), "completed") and peers.size() > first_peer + 1 and frames[first_frame + 1][0] == peers[first_peer + 1]
		and frames[first_frame + 1][1].matches.m == 7.0, "the subscription reconnects and resumes after an idle drop", str(frames))
	subscription.close()
	subscription.queue_free()


func game_tests():
	var game = GameConnection.new("127.0.0.1:%d" % port, "join-token")
	root.add_child(game)
	var joining = game.join()
	check(yield(until(frames, 3), "completed") and to_json(frames[2][1]) == to_json({"type": "join", "token": "join-token"}),
		"the join token travels in the first message", str(frames))
	var peer = peers[peers.size() - 1]
	send(peer, {"type": "joined", "playerId": "p", "team": 1})
	var joined = yield(joining, "completed")
	check(joined.ok and joined.playerId == "p" and joined.team == 1 and game.team == 1, "joined answers the player and team", str(joined))
	send(peer, {"type": "tick", "seq": 1, "remainingMs": 10})
	send(peer, {"type": "ended", "outcome": "COMPLETED", "winningTeam": 1})
	server.disconnect_peer(peer, 1000, "match over")
	yield(until_closed(game), "completed")
	check(game.outcome == "COMPLETED" and game.winning_team == 1 and game.messages.size() == 2, "the game's messages and its end are kept", str(game.messages))
	check(game.close_code == 1000, "the close code is kept", str(game.close_code))

	var refused = GameConnection.new("127.0.0.1:%d" % port, "bad-token")
	root.add_child(refused)
	var refusing = refused.join()
	yield(until(frames, 4), "completed")
	server.disconnect_peer(peers[peers.size() - 1], GameConnection.INVALID_TOKEN, "invalid token")
	var answer = yield(refusing, "completed")
	check(not answer.ok and answer.code == GameConnection.INVALID_TOKEN, "a refused join answers the close code", str(answer))
	game.queue_free()
	refused.queue_free()


func token() -> String:
	return "tok"


func send(peer_id: int, message: Dictionary) -> void:
	var peer = server.get_peer(peer_id)
	peer.set_write_mode(WebSocketPeer.WRITE_MODE_TEXT)
	peer.put_packet(to_json(message).to_utf8())


# Polls the server until the array holds `size` items (true) or STEP_MS passes (false).
func until(items: Array, size: int) -> bool:
	var deadline = OS.get_ticks_msec() + STEP_MS
	server.poll()
	yield(create_timer(0.01), "timeout")
	while items.size() < size and OS.get_ticks_msec() < deadline:
		server.poll()
		yield(create_timer(0.01), "timeout")
	return items.size() >= size


func until_closed(game) -> void:
	var deadline = OS.get_ticks_msec() + STEP_MS
	yield(create_timer(0.01), "timeout")
	while game.close_code < 0 and OS.get_ticks_msec() < deadline:
		server.poll()
		yield(create_timer(0.01), "timeout")


func _on_client(id: int, protocol: String) -> void:
	peers.append(id)
	protocols.append(protocol)


func _on_frame(id: int) -> void:
	var parsed = JSON.parse(server.get_peer(id).get_packet().get_string_from_utf8())
	frames.append([id, parsed.result])


func _collect_reconnect(code: int, reason: String, _delay_ms: int, into: Array) -> void:
	into.append([code, reason])


func _collect(item, into: Array) -> void:
	into.append(item)
