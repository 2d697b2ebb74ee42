// Holds the C++ verifier to test/fixtures/join-auth-vectors.json, the specification of the bytes.
// Usage: vectors_test [path/to/join-auth-vectors.json]. Prints one line per failed check and
// "cpp: N passed, M failed" last; exits 1 on any failure.
#include <fstream>
#include <iostream>
#include <sstream>

#include "matchplane/join_auth.hpp"
#include "matchplane/json.hpp"

using namespace matchplane;

namespace {

int passed = 0;
int failed = 0;

void check(bool ok, const std::string& name, const std::string& detail = "") {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::cout << "FAIL " << name << (detail.empty() ? "" : ": " + detail) << "\n";
  }
}

void checkEqual(const std::string& actual, const std::string& expected, const std::string& name) {
  check(actual == expected, name, "got " + actual + ", expected " + expected);
}

JoinClaims claimsOf(const json::Value& v) {
  return JoinClaims{v.at("keyId").str(),    v.at("matchId").str(),  v.at("playerId").str(),
                    v.at("serverId").str(), v.at("endpoint").str(), v.at("issuedAt").i64(),
                    v.at("expiresAt").i64()};
}

Expectation expectationOf(const json::Value& v) {
  Expectation e;
  e.serverId = v.at("serverId").str();
  if (v.has("matchId")) e.matchId = v.at("matchId").str();
  e.now = v.at("now").i64();
  return e;
}

std::vector<RosterEntry> entriesOf(const json::Value& v) {
  std::vector<RosterEntry> entries;
  for (const json::Value& e : v.array) entries.push_back({e.at("playerId").str(), e.at("token").str()});
  return entries;
}

// A manifest whose JSON shape is wrong (missing member, wrong type) is MALFORMED, as in TS.
std::optional<RosterManifest> manifestOf(const json::Value& v) {
  try {
    RosterManifest m;
    m.matchId = v.at("matchId").str();
    m.serverId = v.at("serverId").str();
    m.keyId = v.at("keyId").str();
    m.digest = v.at("digest").str();
    m.entryCount = v.at("entryCount").i64();
    m.issuedAt = v.at("issuedAt").i64();
    if (v.has("revision")) m.revision = v.at("revision").i64();
    m.signature = v.at("signature").str();
    return m;
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

std::string reasonOf(const Verification& v) { return v.ok ? "OK" : v.reason; }

template <typename Body>
void checkThrows(const std::string& code, const std::string& name, Body body) {
  try {
    body();
    check(false, name, "did not throw");
  } catch (const JoinAuthError& error) {
    check(error.code == code, name, "threw " + error.code);
  }
}

// What the vectors cannot say: key files, key sets and expectations that must be refused.
void checkKeySetsAndExpectations() {
  const std::string key = "u4IDTIdbR5HJdc6KQI6E3ar6uoNKI3uIaSnMEiR5gFo=";
  auto bytesOf = [](const std::string& text) { return Bytes(text.begin(), text.end()); };
  checkThrows("INVALID_KEY_SET", "a key map with a typo is refused, not taken as a raw key",
              [&] { KeySet::parseKeyFile(bytesOf("{\"mp-1\": \"" + key + "\",}")); });
  checkThrows("INVALID_KEY_SET", "a key under 32 bytes is refused",
              [&] { KeySet::parseKeyFile(bytesOf("{\"mp-1\": \"AAAA\"}")); });
  checkThrows("INVALID_KEY_SET", "an empty key map is refused", [&] { KeySet::parseKeyFile(bytesOf("{}")); });
  checkThrows("INVALID_KEY_SET", "one key id naming two keys is refused", [&] {
    KeySet::unite(KeySet::parseKeyFile(bytesOf("{\"mp-1\": \"" + key + "\"}")),
                  KeySet::parseKeyFile(bytesOf("{\"mp-1\": \"c/UGRmzt++PZHVZudFqlmmS7acaaS+MGnEop/s/zj8c=\"}")));
  });
  KeySet raw = KeySet::parseKeyFile(bytesOf(std::string(32, 'k') + "\n"));
  check(raw.ids() == std::vector<std::string>{""} && raw.mac("", Bytes()).has_value(),
        "a raw key file (trailing newline included) is one key with id \"\"");
  checkThrows("INVALID_KEY_SET", "retiring the last key is refused", [&] { raw.without({""}); });
  JoinTokenVerifier verifier(raw);
  checkThrows("INVALID_EXPECTATION", "an empty server id is refused, never treated as no check",
              [&] { verifier.verify("x.y", Expectation{"", std::nullopt, 0}); });
  checkThrows("INVALID_EXPECTATION", "an uppercase match id expectation is refused",
              [&] { verifier.verify("x.y", Expectation{"gs-1", std::string("11111111-1111-4111-8111-11111111111A"), 0}); });
  checkThrows("INVALID_EXPECTATION", "a negative clock is refused",
              [&] { verifier.verify("x.y", Expectation{"gs-1", std::nullopt, -1}); });
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "../../test/fixtures/join-auth-vectors.json";
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cout << "cannot read " << path << "\ncpp: 0 passed, 1 failed\n";
    return 1;
  }
  std::stringstream text;
  text << file.rdbuf();

  try {
    json::Value vectors = json::parse(text.str());
    std::string keyMap;
    {
      // Re-serialising the map would need a writer; the key file path is tested by building it here.
      std::ostringstream map;
      map << "{";
      bool first = true;
      for (const auto& key : vectors.at("keys").object) {
        map << (first ? "" : ",") << "\"" << key.first << "\":\"" << key.second.str() << "\"";
        first = false;
      }
      map << "}";
      keyMap = map.str();
    }
    Bytes rawKey = *base64Decode(vectors.at("rawKeyBase64").str());
    KeySet keys = KeySet::unite(KeySet::parseKeyFile(Bytes(keyMap.begin(), keyMap.end())),
                                KeySet::parseKeyFile(rawKey));
    std::int64_t skew = vectors.at("clockSkewMs").i64();
    auto holding = [&](const std::vector<std::string>& keyIds) {
      std::vector<std::string> retired;
      for (const std::string& id : keys.ids()) {
        bool held = false;
        for (const std::string& keep : keyIds) held = held || keep == id;
        if (!held) retired.push_back(id);
      }
      return JoinTokenVerifier(keys.without(retired), skew);
    };
    JoinTokenVerifier everyKey(keys, skew);

    for (const json::Value& t : vectors.at("tokens").array) {
      std::string name = "token " + t.at("name").str();
      JoinClaims claims = claimsOf(t.at("claims"));
      Bytes bytes = encodeJoinClaims(claims);
      checkEqual(toHex(bytes), t.at("claimBytesHex").str(), name + " claim bytes");
      auto decoded = decodeJoinClaims(*fromHex(t.at("claimBytesHex").str()));
      check(decoded && *decoded == claims, name + " decodes back to its claims");
      auto mac = keys.mac(claims.keyId, bytes);
      checkEqual(mac ? toHex(*mac) : "(no key)", t.at("macHex").str(), name + " MAC");
      checkEqual(base64UrlEncode(bytes) + "." + base64UrlEncode(mac.value_or(Bytes())), t.at("token").str(),
                 name + " token");
      Expectation expect{claims.serverId, claims.matchId, claims.issuedAt};
      Verification result = everyKey.verify(t.at("token").str(), expect);
      checkEqual(reasonOf(result), "OK", name + " verifies");
      check(result.ok && result.claims == claims, name + " verifies to its claims");
    }

    for (const json::Value& r : vectors.at("rejections").array) {
      std::vector<std::string> keyIds;
      for (const json::Value& id : r.at("verifierKeyIds").array) keyIds.push_back(id.str());
      Verification result = holding(keyIds).verify(r.at("token").str(), expectationOf(r.at("expect")));
      checkEqual(reasonOf(result), r.at("reason").str(), "rejection " + r.at("name").str());
    }

    for (const json::Value& a : vectors.at("acceptances").array) {
      std::vector<std::string> keyIds;
      for (const json::Value& id : a.at("verifierKeyIds").array) keyIds.push_back(id.str());
      Verification result = holding(keyIds).verify(a.at("token").str(), expectationOf(a.at("expect")));
      checkEqual(reasonOf(result), "OK", "acceptance " + a.at("name").str());
    }

    for (const json::Value& roster : vectors.at("rosters").array) {
      std::string name = "roster " + roster.at("name").str();
      std::vector<RosterEntry> entries = entriesOf(roster.at("entries"));
      Bytes input = encodeRosterDigestInput(roster.at("matchId").str(), roster.at("serverId").str(), entries);
      checkEqual(toHex(input), roster.at("digestInputHex").str(), name + " digest input");
      checkEqual(toHex(sha256(input)), roster.at("digestHex").str(), name + " digest");
      auto manifest = manifestOf(roster.at("manifest"));
      check(manifest.has_value(), name + " manifest reads");
      if (manifest) {
        Bytes manifestBytes = encodeRosterManifest(*manifest);
        checkEqual(toHex(manifestBytes), roster.at("manifestBytesHex").str(), name + " manifest bytes");
        auto mac = keys.mac(roster.at("keyId").str(), manifestBytes);
        checkEqual(mac ? toHex(*mac) : "(no key)", roster.at("manifestMacHex").str(), name + " manifest MAC");
        checkEqual(manifest->signature, base64UrlEncode(mac.value_or(Bytes())), name + " signature");
        checkEqual(reasonOf(everyKey.verifyRoster(*manifest, entries, expectationOf(roster.at("expect")))), "OK",
                   name + " verifies");
      }
      for (const json::Value& r : roster.at("rejections").array) {
        auto rejected = manifestOf(r.at("manifest"));
        std::string reason = rejected ? reasonOf(everyKey.verifyRoster(*rejected, entriesOf(r.at("entries")),
                                                                       expectationOf(r.at("expect"))))
                                      : "MALFORMED";
        checkEqual(reason, r.at("reason").str(), name + " rejection " + r.at("name").str());
      }
    }
  } catch (const std::exception& error) {
    check(false, "vectors file", error.what());
  }

  try {
    checkKeySetsAndExpectations();
  } catch (const std::exception& error) {
    check(false, "key sets and expectations", error.what());
  }
  std::cout << "cpp: " << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
