# Failover across the API's replicas (api_endpoints.gd): the player client's HTTP calls against a
# replica that is down (nothing listens on its port), one answering 502/503 and a scripted API
# (tests/stand_in_api.gd): the retry goes to the next replica with the same Idempotency-Key, later
# calls stay there, a call sent once still moves the list, a 500 does not; the notification socket
# against two scripted WebSocket servers: a dropped connection reconnects to the next replica and
# resumes there, a 4008 (slow consumer) stays, and the socket and the HTTP calls share one list.
# Run headless:
#   godot3-server --path sdks/godot -s tests/failover_test.gd
# Prints each failed check and "godot-failover: N passed, M failed" last.
extends "res://tests/checks.gd"

const PlayerClient = preload("res://addons/matchplane/player_client.gd")
const ApiEndpoints = preload("res://addons/matchplane/api_endpoints.gd")
const NotificationSubscription = preload("res://addons/matchplane/notification_subscription.gd")
const Frames = preload("res://tests/notification_frames.gd")
const StandInApi = preload("res://tests/stand_in_api.gd")
const DOWN = "http://127.0.0.1:1"  # a replica that is down: nothing listens on port 1
const STEP_MS = 5000

var api = StandInApi.new()  # the replica that answers
var failing = StandInApi.new()  # a replica answering 502/503
var sockets = [WebSocketServer.new(), WebSocketServer.new()]  # notification replicas A and B
var socket_ports = [0, 0]
var connections = [[], []]  # per replica: the peer ids that connected, in order
var frames = [[], []]  # per replica: the parsed frames the clients sent
var events = []
var sections_done = 0  # a script error ends a section silently: each one counts its end


func _initialize() -> void:
	root.add_child(api)
	root.add_child(failing)
	check(api.listen() > 0 and failing.listen() > 0, "the stand-in replicas listen")
	for i in range(2):
		sockets[i].connect("client_connected", self, "_on_socket_client", [i])
		sockets[i].connect("data_received", self, "_on_socket_frame", [i])
		for candidate in range(39300 + i * 50, 39350 + i * 50):
			if sockets[i].listen(candidate, PoolStringArray([NotificationSubscription.SUBPROTOCOL])) == OK:
				socket_ports[i] = candidate
				break
	check(socket_ports[0] > 0 and socket_ports[1] > 0, "the stand-in notification replicas listen")
	endpoint_tests()
	if api.port > 0 and failing.port > 0:
		yield(http_tests(), "completed")
	if socket_ports[0] > 0 and socket_ports[1] > 0:
		yield(socket_tests(), "completed")
	check_equal(sections_done, 2, "every section ran to its end")
	for server in sockets:
		server.stop()
	api.queue_free()
	failing.queue_free()
	report("godot-failover")


# The list alone: its forms, the order, a stale failure, the wrap-around.
func endpoint_tests() -> void:
	var listed = ApiEndpoints.new(" https://mm-1.example.com/ ,https://mm-2.example.com")
	check(listed.urls == ["https://mm-1.example.com", "https://mm-2.example.com"], "\"a,b\" lists both replicas, trailing slashes dropped", str(listed.urls))
	check_equal(listed.api_url(), "https://mm-1.example.com/v1/", "the first replica is current, with the /v1/ prefix")
	listed.failover("https://mm-1.example.com")
	check_equal(listed.current(), "https://mm-2.example.com", "a failed replica moves the list to the next")
	listed.failover("https://mm-1.example.com")
	check_equal(listed.current(), "https://mm-2.example.com", "a second failure of the replica already left moves nothing")
	listed.failover("https://mm-2.example.com")
	check_equal(listed.current(), "https://mm-1.example.com", "past the last replica the list starts over")
	check_equal(ApiEndpoints.new(["http://a", "http://b/"]).urls, ["http://a", "http://b"], "an Array of base URLs")
	check_equal(ApiEndpoints.new("http://a").size(), 1, "one base URL is a list of one")


func http_tests():
	var client = client_on([DOWN, api.url()])
	api.answer("POST /v1/sessions", 201, {"token": "tok-1", "playerId": "p-1"})
	var session = yield(client.create_session(), "completed")
	check(session.ok and session.unanswered == 1 and client.session_token == "tok-1", "a call that finds its replica down is retried on the next", str(session))
	check_equal(client.api_url(), api.url() + "v1/", "the client stays on the replica that answered")
	client.queue_free()

	api.reset()
	client = client_on([failing.url(), api.url()])
	failing.answer("POST /v1/queue/tickets", 503, {"code": "UNAVAILABLE"})
	api.answer("POST /v1/queue/tickets", 201, {"id": "t-1", "state": "SEARCHING"})
	var ticket = yield(client.create_ticket("duel"), "completed")
	var first = failing.find("POST /v1/queue/tickets")
	var retried = api.find("POST /v1/queue/tickets")
	check(ticket.ok and ticket.body.id == "t-1" and first.size() == 1 and retried.size() == 1, "a 503 moves the retry to the next replica", str(ticket))
	check(first.size() == 1 and retried.size() == 1 and first[0].headers.has("idempotency-key")
		and retried[0].headers.get("idempotency-key") == first[0].headers["idempotency-key"], "the retry on the next replica carries the same Idempotency-Key")
	api.answer("GET /v1/queue/tickets/t-1", 200, {"id": "t-1", "state": "SEARCHING"})
	var read = yield(client.ticket("t-1"), "completed")
	check(read.ok and failing.find("GET /v1/queue/tickets/t-1").empty(), "later calls go to the replica that answered", str(read))
	client.queue_free()

	api.reset()
	failing.reset()
	client = client_on([failing.url(), api.url()])
	failing.answer("POST /v1/parties/current/leave", 502, {"code": "BAD_GATEWAY"})
	var left = yield(client.leave_party(), "completed")
	check(not left.ok and left.status == 502 and api.find("POST /v1/parties/current/leave").empty(), "a call sent once is not retried on the next replica", str(left))
	check_equal(client.api_url(), api.url() + "v1/", "but its 502 moves the list for the next call")
	api.answer("GET /v1/blocks", 500, {"code": "INTERNAL"})
	api.answer("GET /v1/blocks", 200, {"blocked": [], "maxEntries": 100})
	var blocks = yield(client.block_list(), "completed")
	check(blocks.ok and api.find("GET /v1/blocks").size() == 2 and failing.find("GET /v1/blocks").empty(),
		"a 500 is retried on the same replica (the request, not the replica, failed)", str(blocks))
	client.queue_free()
	sections_done += 1


func socket_tests():
	var subscription = NotificationSubscription.new([socket_url(0), socket_url(1)], funcref(self, "token"))
	subscription.base_delay_ms = 20
	subscription.connect("event", self, "_collect", [events])
	root.add_child(subscription)
	check(yield(until(connections[0], 1), "completed"), "the subscription connects to the first replica")
	send(0, connections[0][0], {"type": "ready", "playerId": "p"})
	send(0, connections[0][0], Frames.event(1))
	send(0, connections[0][0], Frames.event(2))
	yield(until(events, 2), "completed")
	sockets[0].disconnect_peer(connections[0][0], 1001, "going away")
	check(yield(until(connections[1], 1), "completed") and connections[0].size() == 1, "a dropped connection reconnects to the next replica")
	check(yield(until(frames[1], 1), "completed") and frames[1][0].type == "resume" and frames[1][0].matches.m == 2.0,
		"the next replica is asked to resume from the last revision seen", str(frames[1]))
	send(1, connections[1][0], {"type": "ready", "playerId": "p"})
	send(1, connections[1][0], Frames.event(3))
	yield(until(events, 3), "completed")
	check(Frames.revisions(events) == [1, 2, 3], "the events go on in order on the next replica", str(Frames.revisions(events)))
	sockets[1].disconnect_peer(connections[1][0], NotificationSubscription.SLOW_CONSUMER, "slow consumer")
	check(yield(until(connections[1], 2), "completed") and connections[0].size() == 1, "a slow consumer's close reconnects to the same replica")
	subscription.close()
	subscription.queue_free()

	# One list for both: the socket goes where the HTTP calls found a replica alive, and its own
	# drop moves the HTTP calls on too.
	var client = PlayerClient.new([DOWN, socket_url(1)])
	client.session_token = "tok-1"
	client.transport().retries = 0
	root.add_child(client)
	var unanswered = yield(client.ticket("t-1"), "completed")
	check(unanswered.code == "TRANSPORT_ERROR" and client.api_url() == socket_url(1) + "/v1/", "a call that got no answer moved the list", str(unanswered))
	var shared = client.subscribe()
	check(yield(until(connections[1], 3), "completed"), "the client's socket connects to the replica its HTTP calls moved to")
	sockets[1].disconnect_peer(connections[1][2], 1001, "going away")
	yield(until_moved(client), "completed")
	check_equal(client.api_url(), DOWN + "/v1/", "the socket's drop moves the client's HTTP calls on as well")
	shared.close()
	client.queue_free()
	sections_done += 1


# A signed-in client of these replicas, retrying after 10-20 ms.
func client_on(replicas: Array) -> Node:
	var client = PlayerClient.new(replicas)
	client.session_token = "tok-0"
	client.transport().base_delay_ms = 20
	root.add_child(client)
	return client


func socket_url(i: int) -> String:
	return "http://127.0.0.1:%d" % socket_ports[i]


func token() -> String:
	return "tok"


func send(replica: int, peer_id: int, message: Dictionary) -> void:
	var peer = sockets[replica].get_peer(peer_id)
	peer.set_write_mode(WebSocketPeer.WRITE_MODE_TEXT)
	peer.put_packet(to_json(message).to_utf8())


func poll() -> void:
	for server in sockets:
		server.poll()


# Polls the servers until the array holds `size` items (true) or STEP_MS passes (false).
func until(items: Array, size: int) -> bool:
	var deadline = OS.get_ticks_msec() + STEP_MS
	poll()
	yield(create_timer(0.01), "timeout")
	while items.size() < size and OS.get_ticks_msec() < deadline:
		poll()
		yield(create_timer(0.01), "timeout")
	return items.size() >= size


func until_moved(client) -> void:
	var deadline = OS.get_ticks_msec() + STEP_MS
	var before = client.api_url()
	yield(create_timer(0.01), "timeout")
	while client.api_url() == before and OS.get_ticks_msec() < deadline:
		poll()
		yield(create_timer(0.01), "timeout")


func _on_socket_client(id: int, _protocol: String, replica: int) -> void:
	connections[replica].append(id)


func _on_socket_frame(id: int, replica: int) -> void:
	var parsed = JSON.parse(sockets[replica].get_peer(id).get_packet().get_string_from_utf8())
	frames[replica].append(parsed.result)


func _collect(item, into: Array) -> void:
	into.append(item)
