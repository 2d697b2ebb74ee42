// A small strict JSON reader: enough for key files and the golden vectors, with no dependency
// beyond the standard library. Numbers keep whether they were written as integers, because
// times and counts must be exact integers (docs/JOIN-AUTH.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace matchplane {
namespace json {

class Value {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  bool isInteger = false;
  std::int64_t integer = 0;
  std::string string;
  std::vector<Value> array;
  // Insertion order kept: a key file's first key is the first the verifier tries.
  std::vector<std::pair<std::string, Value>> object;

  bool isString() const { return kind == Kind::String; }
  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isInt() const { return kind == Kind::Number && isInteger; }

  const Value* find(const std::string& key) const {
    for (const auto& member : object) {
      if (member.first == key) return &member.second;
    }
    return nullptr;
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }
  const Value& at(const std::string& key) const {
    const Value* member = find(key);
    if (member == nullptr) throw std::runtime_error("missing JSON member " + key);
    return *member;
  }
  const std::string& str() const {
    if (!isString()) throw std::runtime_error("JSON value is not a string");
    return string;
  }
  std::int64_t i64() const {
    if (!isInt()) throw std::runtime_error("JSON value is not an integer");
    return integer;
  }
};

class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Value document() {
    Value value = parseValue(0);
    skipSpace();
    if (pos_ != text_.size()) fail("trailing characters");
    return value;
  }

 private:
  const std::string& text_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError("JSON: " + what + " at offset " + std::to_string(pos_));
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  bool consume(const char* literal) {
    std::size_t length = std::char_traits<char>::length(literal);
    if (text_.compare(pos_, length, literal) != 0) return false;
    pos_ += length;
    return true;
  }

  Value parseValue(int depth) {
    if (depth > 64) fail("nesting too deep");
    skipSpace();
    if (pos_ >= text_.size()) fail("unexpected end");
    Value value;
    char c = text_[pos_];
    if (c == '{') {
      value.kind = Value::Kind::Object;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}') { ++pos_; return value; }
      for (;;) {
        skipSpace();
        if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a member name");
        std::string key = parseString();
        skipSpace();
        if (pos_ >= text_.size() || text_[pos_] != ':') fail("expected ':'");
        ++pos_;
        Value member = parseValue(depth + 1);
        value.object.emplace_back(std::move(key), std::move(member));
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') { ++pos_; continue; }
        if (pos_ < text_.size() && text_[pos_] == '}') { ++pos_; return value; }
        fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      value.kind = Value::Kind::Array;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') { ++pos_; return value; }
      for (;;) {
        value.array.push_back(parseValue(depth + 1));
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') { ++pos_; continue; }
        if (pos_ < text_.size() && text_[pos_] == ']') { ++pos_; return value; }
        fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      value.kind = Value::Kind::String;
      value.string = parseString();
      return value;
    }
    if (consume("true")) { value.kind = Value::Kind::Bool; value.boolean = true; return value; }
    if (consume("false")) { value.kind = Value::Kind::Bool; return value; }
    if (consume("null")) return value;
    return parseNumber();
  }

  Value parseNumber() {
    std::size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    std::size_t digits = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    if (pos_ == digits) fail("expected a value");
    if (text_[digits] == '0' && pos_ - digits > 1) fail("leading zero");
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      std::size_t fraction = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == fraction) fail("bad fraction");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      std::size_t exponent = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == exponent) fail("bad exponent");
    }
    Value value;
    value.kind = Value::Kind::Number;
    std::string literal = text_.substr(start, pos_ - start);
    value.number = std::stod(literal);
    // Integers beyond 2^53 - 1 are not exact in the JavaScript that wrote the vectors.
    if (integral && literal.size() <= 17) {
      value.integer = std::stoll(literal);
      value.isInteger = value.integer <= 9007199254740991LL && value.integer >= -9007199254740991LL;
    }
    return value;
  }

  unsigned hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text_[pos_++];
      code <<= 4;
      if (h >= '0' && h <= '9') code |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f') code |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') code |= unsigned(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return code;
  }

  static void appendUtf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xc0 | (code >> 6));
      out += char(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += char(0xe0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    } else {
      out += char(0xf0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3f));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    }
  }

  std::string parseString() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_++]);
      if (c == '"') return out;
      if (c < 0x20) fail("control character in string");
      if (c != '\\') { out += char(c); continue; }
      if (pos_ >= text_.size()) fail("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xd800 && code < 0xdc00) {
            if (!consume("\\u")) fail("lone surrogate");
            unsigned low = hex4();
            if (low < 0xdc00 || low >= 0xe000) fail("lone surrogate");
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          } else if (code >= 0xdc00 && code < 0xe000) {
            fail("lone surrogate");
          }
          appendUtf8(out, code);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
};

}  // namespace detail

inline Value parse(const std::string& text) { return detail::Parser(text).document(); }

}  // namespace json
}  // namespace matchplane
