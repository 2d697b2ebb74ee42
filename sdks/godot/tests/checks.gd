# What every headless runner (tests/*_test.gd, live/live_journey.gd) shares: counted checks, each
# failure printed, and "<suite>: N passed, M failed" last with a non-zero exit code on failure.
extends SceneTree

var passed = 0
var failed = 0


func check(ok: bool, name: String, detail = "") -> void:
	if ok:
		passed += 1
	else:
		failed += 1
		print("FAIL " + name + (": " + str(detail) if str(detail) != "" else ""))


func check_equal(actual, expected, name: String) -> void:
	check(actual == expected, name, "got %s, expected %s" % [actual, expected])


func report(suite: String) -> void:
	print("%s: %d passed, %d failed" % [suite, passed, failed])
	quit(0 if failed == 0 and passed > 0 else 1)
