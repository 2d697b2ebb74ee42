# Holds the GDScript verifier to test/fixtures/join-auth-vectors.json. Run headless:
#   godot3-server --path sdks/godot -s tests/vectors_test.gd --vectors=<path>
# Prints each failed check and "godot: N passed, M failed" last; the exit code is 1 on failure.
extends "res://tests/checks.gd"

const JoinAuth = preload("res://addons/matchplane/join_auth.gd")
const Bytes = preload("res://addons/matchplane/join_auth_bytes.gd")


# Godot's JSON reads every number as a float; the vectors' numbers are exact integers.
func ints(value):
	match typeof(value):
		TYPE_REAL:
			return int(value) if value == floor(value) and abs(value) <= JoinAuth.MAX_INSTANT else value
		TYPE_DICTIONARY:
			var out = {}
			for key in value:
				out[key] = ints(value[key])
			return out
		TYPE_ARRAY:
			var out = []
			for item in value:
				out.append(ints(item))
			return out
	return value


func verifier_holding(vectors: Dictionary, key_ids: Array):
	var all = {"": Bytes.base64_decode(vectors.rawKeyBase64)}
	for id in vectors["keys"]:
		all[id] = Bytes.base64_decode(vectors["keys"][id])
	var held = {}
	for id in all:
		if key_ids.has(id):
			held[id] = all[id]
	var verifier = JoinAuth.new()
	verifier.clock_skew_ms = vectors.clockSkewMs
	var problem = verifier.set_keys(held)
	check(problem == "", "key set", problem)
	return verifier


# Dictionaries compare by reference in Godot 3; claims compare by their fields.
func claims_text(claims) -> String:
	if typeof(claims) != TYPE_DICTIONARY:
		return "(none)"
	var fields = []
	for field in ["keyId", "matchId", "playerId", "serverId", "endpoint", "issuedAt", "expiresAt"]:
		fields.append("%s=%s/%d" % [field, claims.get(field), typeof(claims.get(field))])
	return PoolStringArray(fields).join(" ")


func reason_of(result: Dictionary) -> String:
	return "OK" if result.ok else result.reason


func run(path: String) -> void:
	var file = File.new()
	if file.open(path, File.READ) != OK:
		check(false, "read " + path)
		return
	var parsed = JSON.parse(file.get_as_text())
	file.close()
	if parsed.error != OK:
		check(false, "parse " + path, parsed.error_string)
		return
	var vectors = ints(parsed.result)
	var every_key = verifier_holding(vectors, ["", "mp-2026-01", "mp-2026-07"])

	for t in vectors.tokens:
		var name = "token " + t.name
		var bytes = JoinAuth.encode_join_claims(t.claims)
		check_equal(Bytes.to_hex(bytes), t.claimBytesHex, name + " claim bytes")
		check_equal(claims_text(JoinAuth.decode_join_claims(Bytes.from_hex(t.claimBytesHex))), claims_text(t.claims), name + " decodes back")
		var mac = every_key.mac(t.claims.keyId, bytes)
		check_equal(Bytes.to_hex(mac) if mac != null else "(no key)", t.macHex, name + " MAC")
		check_equal(Bytes.base64url_encode(bytes) + "." + Bytes.base64url_encode(mac if mac != null else PoolByteArray()), t.token, name + " token")
		var result = every_key.verify(t.token, {"serverId": t.claims.serverId, "matchId": t.claims.matchId, "now": t.claims.issuedAt})
		check_equal(reason_of(result), "OK", name + " verifies")
		check_equal(claims_text(result.get("claims")), claims_text(t.claims), name + " verifies to its claims")

	for r in vectors.rejections:
		var result = verifier_holding(vectors, r.verifierKeyIds).verify(r.token, r.expect)
		check_equal(reason_of(result), r.reason, "rejection " + r.name)

	for a in vectors.acceptances:
		var result = verifier_holding(vectors, a.verifierKeyIds).verify(a.token, a.expect)
		check_equal(reason_of(result), "OK", "acceptance " + a.name)

	for roster in vectors.rosters:
		var name = "roster " + roster.name
		var input = JoinAuth.encode_roster_digest_input(roster.matchId, roster.serverId, roster.entries)
		check_equal(Bytes.to_hex(input), roster.digestInputHex, name + " digest input")
		check_equal(Bytes.to_hex(Bytes.sha256(input)), roster.digestHex, name + " digest")
		var manifest_bytes = JoinAuth.encode_roster_manifest(roster.manifest)
		check_equal(Bytes.to_hex(manifest_bytes), roster.manifestBytesHex, name + " manifest bytes")
		var mac = every_key.mac(roster.keyId, manifest_bytes)
		check_equal(Bytes.to_hex(mac) if mac != null else "(no key)", roster.manifestMacHex, name + " manifest MAC")
		check_equal(roster.manifest.signature, Bytes.base64url_encode(mac if mac != null else PoolByteArray()), name + " signature")
		check_equal(reason_of(every_key.verify_roster(roster.manifest, roster.entries, roster.expect)), "OK", name + " verifies")
		for r in roster.rejections:
			var result = every_key.verify_roster(r.manifest, r.entries, r.expect)
			check_equal(reason_of(result), r.reason, name + " rejection " + r.name)


func _init() -> void:
	var path = "../../test/fixtures/join-auth-vectors.json"
	for arg in OS.get_cmdline_args():
		if arg.begins_with("--vectors="):
			path = arg.substr("--vectors=".length(), arg.length())
	run(path)
	# The vectors hold no invalid UTF-8 inside a validly MAC'd token; the decoder must still refuse it.
	check(Bytes.strict_utf8(PoolByteArray([0xed, 0xa0, 0x80])) == null, "a UTF-8 encoded surrogate is refused")
	check(Bytes.strict_utf8(PoolByteArray([0xc0, 0xaf])) == null, "an overlong UTF-8 form is refused")
	check(Bytes.strict_utf8(PoolByteArray([0xc3, 0x9f])) == "\u00df", "valid UTF-8 decodes")
	report("godot")
