//! JSON text read into a value exactly as `serde_json::from_str` reads it,
//! with strings scanned many bytes at a time ([`from_str`]).
//!
//! Inside a WebAssembly guest serde_json looks at a string four bytes at a
//! time (its word is a `usize`, 32 bits there); reading many bytes a step,
//! and in WebAssembly vectors where the plugin is built with `simd128` (as
//! this repository builds its plugins), makes a large argument's call
//! markedly cheaper in fuel, and a small one's no dearer (the figures, with
//! their date and command, are in `BENCHMARKS.md` at the repository's
//! root). This reader
//! finds a string's end with the writer's scan ([`crate::plain_run`]) and
//! reads the shapes arguments are made of itself: objects, arrays,
//! strings, `true`, `false`, `null`, and externally tagged enums. A
//! number's text is found here and read by serde_json (its value, and its
//! exact float rounding, are serde_json's). Anything else (a map key read
//! as a number or a bool, bytes, serde_json's raw values), and every error,
//! hands the whole text back to serde_json, which reads it afresh: the
//! value or the error is then serde_json's own.
//!
//! The reader accepts only what serde_json accepts, and asks the visitor
//! for what serde_json would ask it: the same value follows. It is
//! stricter in places (a lone surrogate escape, anything unexpected), and
//! there it hands back.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde_json::de::StrRead;

use crate::{HandBack, plain_run};

/// `text` read as a `T`, exactly as `serde_json::from_str` reads it: the
/// same value, or serde_json's error.
///
/// Read here first, many bytes a step; handed back to serde_json when this
/// reader does not take it (see the module documentation). A `Deserialize`
/// implementation with side effects has them twice when the text is handed
/// back.
///
/// # Errors
///
/// serde_json's error for text that is not JSON or does not fit `T`.
///
/// ```
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Args { name: String, count: u32 }
///
/// let text = r#"{"name": "Ada \"the Countess\"", "count": 3}"#;
/// let args: Args = toolhost_json::from_str(text).unwrap();
/// assert_eq!(args, serde_json::from_str(text).unwrap());
/// assert_eq!(
///     toolhost_json::from_str::<Args>(r#"{"name": 1}"#).unwrap_err().to_string(),
///     serde_json::from_str::<Args>(r#"{"name": 1}"#).unwrap_err().to_string(),
/// );
/// ```
pub fn from_str<'de, T: Deserialize<'de>>(text: &'de str) -> serde_json::Result<T> {
    match read(text) {
        Some(value) => Ok(value),
        None => serde_json::from_str(text),
    }
}

/// `text` read by this reader alone, or `None` where it hands it back.
pub(crate) fn read<'de, T: Deserialize<'de>>(text: &'de str) -> Option<T> {
    let mut reader = Reader {
        text,
        at: 0,
        depth: MAX_DEPTH,
    };
    let value = T::deserialize(&mut reader).ok()?;
    reader.peek().is_none().then_some(value)
}

/// How deep arrays and objects may nest: serde_json's limit (it refuses
/// the 128th level).
const MAX_DEPTH: u8 = 127;

/// JSON text and how far it has been read.
struct Reader<'de> {
    text: &'de str,
    /// The offset of the next byte to read (always a character boundary).
    at: usize,
    /// How many more arrays or objects may open.
    depth: u8,
}

type Read<T> = Result<T, HandBack>;

impl<'de> Reader<'de> {
    /// The next byte that is not JSON whitespace, left unread (whitespace
    /// before it is read). `None` at the end.
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.at) {
            if !matches!(byte, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(byte);
            }
            self.at += 1;
        }
        None
    }

    /// Reads `byte`, the next one after whitespace.
    fn eat(&mut self, byte: u8) -> Read<()> {
        if self.peek() != Some(byte) {
            return Err(HandBack);
        }
        self.at += 1;
        Ok(())
    }

    /// Reads `word` (`null`, `true`, `false`), next after whitespace.
    fn word(&mut self, word: &str) -> Read<()> {
        self.peek();
        let end = self.at + word.len();
        if self.text.as_bytes().get(self.at..end) != Some(word.as_bytes()) {
            return Err(HandBack);
        }
        self.at = end;
        Ok(())
    }

    /// Reads the string that starts next (at its opening quote): borrowed
    /// from the text when it has no escape.
    fn string(&mut self) -> Read<Cow<'de, str>> {
        self.eat(b'"')?;
        let text = self.text;
        let bytes = text.as_bytes();
        let mut unescaped: Option<String> = None;
        let mut start = self.at;
        loop {
            // A run ends at a quote, a backslash or a control character
            // (ASCII, so a character boundary), or at the end.
            let end = start + bytes.get(start..).map_or(0, plain_run);
            let run = text.get(start..end).ok_or(HandBack)?;
            match bytes.get(end) {
                Some(b'"') => {
                    self.at = end + 1;
                    return Ok(match unescaped {
                        None => Cow::Borrowed(run),
                        Some(mut value) => {
                            value.push_str(run);
                            Cow::Owned(value)
                        }
                    });
                }
                Some(b'\\') => {
                    let value = unescaped.get_or_insert_with(String::new);
                    value.push_str(run);
                    let (unescaped, next) = escape(bytes, end + 1)?;
                    value.push(unescaped);
                    start = next;
                }
                // A control character, which JSON forbids in a string, or
                // the end of the text.
                _ => return Err(HandBack),
            }
        }
    }

    /// Gives `visitor` the string that starts next, as serde_json does:
    /// borrowed when it has no escape, else a copy.
    fn visit_string<V: Visitor<'de>>(&mut self, visitor: V) -> Read<V::Value> {
        match self.string()? {
            Cow::Borrowed(value) => visitor.visit_borrowed_str(value),
            Cow::Owned(value) => visitor.visit_str(&value),
        }
    }

    /// Reads the number that starts next with serde_json (`read` calls the
    /// same `deserialize_*` method on a serde_json reader of its text).
    fn number<T>(
        &mut self,
        read: impl FnOnce(&mut serde_json::Deserializer<StrRead<'de>>) -> serde_json::Result<T>,
    ) -> Read<T> {
        self.peek();
        let rest = self.text.as_bytes().get(self.at..).unwrap_or_default();
        let len = rest
            .iter()
            .position(|byte| !matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len());
        let number = self.text.get(self.at..self.at + len).ok_or(HandBack)?;
        self.at += len;
        let mut reader = serde_json::Deserializer::from_str(number);
        let value = read(&mut reader).map_err(|_| HandBack)?;
        reader.end().map_err(|_| HandBack)?;
        Ok(value)
    }

    /// Opens an array or object (its first byte is next): one level deeper.
    fn open(&mut self) -> Read<()> {
        self.depth = self.depth.checked_sub(1).ok_or(HandBack)?;
        self.at += 1;
        Ok(())
    }

    /// Closes what [`Reader::open`] opened with `close` (`]`, `}`).
    fn close(&mut self, close: u8) -> Read<()> {
        self.depth += 1;
        self.eat(close)
    }

    /// Gives `visitor` the array that starts next.
    fn visit_array<V: Visitor<'de>>(&mut self, visitor: V) -> Read<V::Value> {
        self.open()?;
        let value = visitor.visit_seq(Elements {
            reader: self,
            first: true,
        })?;
        self.close(b']')?;
        Ok(value)
    }

    /// Gives `visitor` the object that starts next.
    fn visit_object<V: Visitor<'de>>(&mut self, visitor: V) -> Read<V::Value> {
        self.open()?;
        let value = visitor.visit_map(Entries {
            reader: self,
            first: true,
        })?;
        self.close(b'}')?;
        Ok(value)
    }
}

/// The character an escape stands for, the escape's text starting at
/// `bytes[at]` (just past its backslash), and where the text goes on.
fn escape(bytes: &[u8], at: usize) -> Read<(char, usize)> {
    let short = match bytes.get(at) {
        Some(b'u') => return unicode_escape(bytes, at + 1),
        Some(&byte) => crate::short_escape(byte).ok_or(HandBack)?,
        None => return Err(HandBack),
    };
    Ok((short, at + 1))
}

/// A `\uXXXX` escape (`bytes[at]` is its first hex digit), two for a
/// character outside the Basic Multilingual Plane (a surrogate pair). A
/// lone surrogate is handed back (serde_json rejects it).
fn unicode_escape(bytes: &[u8], at: usize) -> Read<(char, usize)> {
    let first = hex4(bytes, at)?;
    let (code, next) = match first {
        0xD800..=0xDBFF => {
            if bytes.get(at + 4..at + 6) != Some(b"\\u") {
                return Err(HandBack);
            }
            let second = hex4(bytes, at + 6)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err(HandBack);
            }
            (0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00), at + 10)
        }
        0xDC00..=0xDFFF => return Err(HandBack),
        code => (code, at + 4),
    };
    Ok((char::from_u32(code).ok_or(HandBack)?, next))
}

/// The four hex digits at `bytes[at]`, either case.
fn hex4(bytes: &[u8], at: usize) -> Read<u32> {
    let digits = bytes.get(at..at + 4).ok_or(HandBack)?;
    digits.iter().try_fold(0, |code, &digit| {
        let digit = char::from(digit).to_digit(16).ok_or(HandBack)?;
        Ok(code * 16 + digit)
    })
}

impl de::Error for HandBack {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        HandBack
    }
}

/// The `deserialize_*` methods of numbers: the number's text is found
/// here, its value read by serde_json's method of the same name.
macro_rules! numbers {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
            match self.peek() {
                Some(b'-' | b'0'..=b'9') => self.number(|reader| reader.$method(visitor)),
                _ => Err(HandBack),
            }
        })*
    };
}

impl<'de> Deserializer<'de> for &mut Reader<'de> {
    type Error = HandBack;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        match self.peek().ok_or(HandBack)? {
            b'n' => {
                self.word("null")?;
                visitor.visit_unit()
            }
            b't' => {
                self.word("true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.word("false")?;
                visitor.visit_bool(false)
            }
            b'"' => self.visit_string(visitor),
            b'-' | b'0'..=b'9' => self.number(|reader| reader.deserialize_any(visitor)),
            b'[' => self.visit_array(visitor),
            b'{' => self.visit_object(visitor),
            _ => Err(HandBack),
        }
    }

    numbers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        match self.peek() {
            Some(b't' | b'f') => self.deserialize_any(visitor),
            _ => Err(HandBack),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        match self.peek() {
            Some(b'"') => self.visit_string(visitor),
            _ => Err(HandBack),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        self.deserialize_str(visitor)
    }

    /// Bytes are serde_json's to read (from a string or an array).
    fn deserialize_bytes<V: Visitor<'de>>(self, _visitor: V) -> Read<V::Value> {
        Err(HandBack)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _visitor: V) -> Read<V::Value> {
        Err(HandBack)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        if self.peek() == Some(b'n') {
            self.word("null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        self.word("null")?;
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Read<V::Value> {
        self.deserialize_unit(visitor)
    }

    /// serde_json's own types (raw values, arbitrary-precision numbers)
    /// are its to read.
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Read<V::Value> {
        if name.starts_with("$serde_json") {
            return Err(HandBack);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        match self.peek() {
            Some(b'[') => self.visit_array(visitor),
            _ => Err(HandBack),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Read<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Read<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        match self.peek() {
            Some(b'{') => self.visit_object(visitor),
            _ => Err(HandBack),
        }
    }

    /// A struct is an object, or an array of its fields in order.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Read<V::Value> {
        match self.peek() {
            Some(b'[') => self.visit_array(visitor),
            Some(b'{') => self.visit_object(visitor),
            _ => Err(HandBack),
        }
    }

    /// A variant is its name (a unit variant) or an object of one entry,
    /// its name and its content.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Read<V::Value> {
        match self.peek() {
            Some(b'"') => visitor.visit_enum(Variant {
                reader: self,
                tagged: false,
            }),
            Some(b'{') => {
                self.open()?;
                let value = visitor.visit_enum(Variant {
                    reader: &mut *self,
                    tagged: true,
                })?;
                self.close(b'}')?;
                Ok(value)
            }
            _ => Err(HandBack),
        }
    }

    /// The value is read (and checked) and dropped; the visitor gets `()`.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        self.deserialize_any(IgnoredAny)?;
        visitor.visit_unit()
    }
}

/// An array's elements.
struct Elements<'r, 'de> {
    reader: &'r mut Reader<'de>,
    first: bool,
}

impl<'de> SeqAccess<'de> for Elements<'_, 'de> {
    type Error = HandBack;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Read<Option<T::Value>> {
        let next = self.reader.peek().ok_or(HandBack)?;
        if next == b']' {
            return Ok(None);
        }
        if !std::mem::take(&mut self.first) {
            self.reader.eat(b',')?;
            // `[1,]`: a trailing comma.
            if self.reader.peek() == Some(b']') {
                return Err(HandBack);
            }
        }
        seed.deserialize(&mut *self.reader).map(Some)
    }
}

/// An object's entries.
struct Entries<'r, 'de> {
    reader: &'r mut Reader<'de>,
    first: bool,
}

impl<'de> MapAccess<'de> for Entries<'_, 'de> {
    type Error = HandBack;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Read<Option<K::Value>> {
        let next = self.reader.peek().ok_or(HandBack)?;
        if next == b'}' {
            return Ok(None);
        }
        if !std::mem::take(&mut self.first) {
            self.reader.eat(b',')?;
        }
        // A key is a string (this also refuses `{"a": 1,}`).
        if self.reader.peek() != Some(b'"') {
            return Err(HandBack);
        }
        seed.deserialize(Key {
            reader: &mut *self.reader,
        })
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Read<V::Value> {
        self.reader.eat(b':')?;
        seed.deserialize(&mut *self.reader)
    }
}

/// An object's key (a string, next): read as a string wherever serde_json
/// reads it as one; read as anything else (a number, a bool, an option,
/// bytes, an enum), handed back.
struct Key<'r, 'de> {
    reader: &'r mut Reader<'de>,
}

/// `deserialize_*` methods of a key that serde_json reads otherwise than
/// as a string: handed back.
macro_rules! hand_back {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {
        $(fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* _visitor: V) -> Read<V::Value> {
            let _ = ($($arg,)*);
            Err(HandBack)
        })*
    };
}

impl<'de> Deserializer<'de> for Key<'_, 'de> {
    type Error = HandBack;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        self.reader.visit_string(visitor)
    }

    serde::forward_to_deserialize_any! {
        char str string unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }

    hand_back! {
        deserialize_bool()
        deserialize_i8() deserialize_i16() deserialize_i32() deserialize_i64() deserialize_i128()
        deserialize_u8() deserialize_u16() deserialize_u32() deserialize_u64() deserialize_u128()
        deserialize_f32() deserialize_f64()
        deserialize_option() deserialize_bytes() deserialize_byte_buf()
        deserialize_newtype_struct(name: &'static str)
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
    }
}

/// An enum's variant: its name (`tagged: false`), or an object's one entry
/// (`tagged: true`, the object opened).
struct Variant<'r, 'de> {
    reader: &'r mut Reader<'de>,
    tagged: bool,
}

impl<'de> EnumAccess<'de> for Variant<'_, 'de> {
    type Error = HandBack;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Read<(T::Value, Self)> {
        let variant = seed.deserialize(&mut *self.reader)?;
        if self.tagged {
            self.reader.eat(b':')?;
        }
        Ok((variant, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'_, 'de> {
    type Error = HandBack;

    fn unit_variant(self) -> Read<()> {
        if self.tagged {
            <()>::deserialize(self.reader)
        } else {
            Ok(())
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Read<T::Value> {
        if !self.tagged {
            return Err(HandBack);
        }
        seed.deserialize(self.reader)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Read<V::Value> {
        if !self.tagged {
            return Err(HandBack);
        }
        self.reader.deserialize_seq(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Read<V::Value> {
        if !self.tagged {
            return Err(HandBack);
        }
        self.reader.deserialize_struct("", fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Debug;

    use serde::Deserialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::{from_str, read};

    /// Asserts that `from_str` reads `text` as a `T` as serde_json does (the
    /// same value, or the same error), and whether this reader took it
    /// itself.
    #[track_caller]
    fn same<T: DeserializeOwned + PartialEq + Debug>(text: &str, own: bool) {
        let ours = from_str::<T>(text).map_err(|e| e.to_string());
        let theirs = serde_json::from_str::<T>(text).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "{text:?}");
        assert_eq!(read::<T>(text).is_some(), own, "read by this reader: {text:?}");
    }

    #[test]
    fn every_json_shape_is_read_as_serde_json_reads_it() {
        for text in [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "12",
            "-12",
            "18446744073709551615",
            "-9223372036854775808",
            "1.5",
            "-1.25e-7",
            "1E+2",
            "0.1",
            "\"\"",
            "\"plain\"",
            "\"esc\\\"aped\\\\ \\/ \\b\\f\\n\\r\\t\"",
            "\"\\u00e9\\u00C9 \\u2028 \\ud83d\\ude00 \\uD83D\\uDE00\"",
            "\"héllo ✓ 😀\"",
            "[]",
            "[1, \"two\", [3], {\"four\": 4}]",
            "{}",
            "{\"a\": {\"b\": [null, true, false, 1.5, \"c\"]}, \"\": 0}",
            " \t\r\n{ \"spaced\" \t:\r\n [ 1 , 2 ] } \n",
            "{\"dup\": 1, \"dup\": 2}",
            "{\"\\u0041\": \"key with an escape\"}",
        ] {
            same::<Value>(text, true);
        }
    }

    #[test]
    fn what_serde_json_refuses_gets_serde_json_s_error() {
        for text in [
            "",
            " ",
            "nul",
            "nulll",
            "True",
            "01",
            "1.",
            "-",
            "+1",
            "1e",
            "1e400",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[1",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a: 1}",
            "{1: 1}",
            "{\"a\":1",
            "\"unterminated",
            "\"tab\there\"",
            "\"nul\u{0}\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12G4\"",
            "\"\\ud83d\"",
            "\"\\ud83d\\u0041\"",
            "\"\\ude00\"",
            "\"a\" \"b\"",
            "{} {}",
            "[] x",
            "\u{feff}{}",
        ] {
            same::<Value>(text, false);
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn nesting_stops_where_serde_json_s_does() {
        for depth in [1, 126, 127, 128, 129, 500] {
            let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            same::<Value>(&arrays, depth < 128);
            let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
            same::<Value>(&objects, depth < 128);
        }
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Unit;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Newtype(String);

    #[derive(Debug, PartialEq, Deserialize)]
    struct Pair(i32, Option<f64>);

    #[derive(Debug, PartialEq, Deserialize)]
    enum Shape {
        Empty,
        Wrapped(u8),
        Tuple(i8, char),
        Fields { name: String, tags: Vec<String> },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged {
        Circle { radius: f64 },
        Label { text: String },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u64),
        Text(String),
        List(Vec<Either>),
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Inner {
        x: i64,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Everything {
        unit: (),
        unit_struct: Unit,
        newtype: Newtype,
        pair: Pair,
        shapes: Vec<Shape>,
        numbers: (i8, i16, i32, i64, i128, u8, u16, u32, u64, u128),
        floats: (f32, f64),
        flags: (bool, bool),
        nothing: Option<String>,
        something: Option<Box<Inner>>,
        map: HashMap<String, Shape>,
        tagged: Vec<Tagged>,
        either: Vec<Either>,
        #[serde(default)]
        missing: Vec<u8>,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }

    const EVERYTHING: &str = r#"{
        "unit": null, "unit_struct": null, "newtype": "new\ttype",
        "pair": [-3, 0.1],
        "shapes": ["Empty", {"Empty": null}, {"Wrapped": 7}, {"Tuple": [-1, "\""]},
                   {"Fields": {"name": "n", "tags": ["a", "b\\"]}}, {"Fields": ["m", []]}],
        "numbers": [-128, -32768, -2147483648, -9223372036854775808,
                    -170141183460469231731687303715884105728, 255, 65535, 4294967295,
                    18446744073709551615, 340282366920938463463374607431768211455],
        "floats": [1.5e-7, -0.0],
        "flags": [true, false],
        "nothing": null, "something": {"x": 5},
        "map": {"k\"ey": "Empty", "other": {"Wrapped": 1}},
        "tagged": [{"type": "circle", "radius": 2}, {"text": "hi", "type": "label"}],
        "either": [1, "two", [3, "four"]],
        "extra": {"kept": [1, 2]}, "more": "text"
    }"#;

    #[test]
    fn every_serde_shape_is_read_as_serde_json_reads_it() {
        same::<Everything>(EVERYTHING, true);
        // A struct may be an array of its fields in order.
        same::<Inner>("[7]", true);
        same::<Shape>("\"Empty\"", true);
        same::<Vec<Either>>("[1, \"a\", [2, [\"b\"]]]", true);
        same::<BTreeMap<String, Option<Pair>>>("{\"a\": null, \"b\": [1, null], \"c\": [2, 2.5]}", true);
        same::<char>("\"é\"", true);
        same::<String>("\"\\ud83d\\ude00 and \\n\"", true);
    }

    #[test]
    fn values_that_do_not_fit_get_serde_json_s_error() {
        for text in [
            "{\"x\": \"5\"}",
            "{\"x\": 5.5}",
            "{\"x\": 5, \"x\": 6}",
            "{}",
            "[7, 8]",
            "[]",
            "\"Inner\"",
            "{\"x\": 9223372036854775808}",
        ] {
            same::<Inner>(text, false);
        }
        same::<u8>("256", false);
        same::<u8>("-1", false);
        same::<char>("\"ab\"", false);
        same::<Shape>("\"Wrapped\"", false);
        same::<Shape>("{\"Empty\": 1}", false);
        same::<Shape>("{\"Wrapped\": 1, \"Empty\": null}", false);
        same::<Shape>("{\"Nope\": null}", false);
        same::<Shape>("7", false);
        same::<Vec<u8>>("{\"0\": 1}", false);
        same::<HashMap<String, u8>>("[[\"a\", 1]]", false);
        same::<()>("0", false);
        same::<Tagged>("{\"type\": \"square\"}", false);
    }

    #[test]
    fn what_serde_json_reads_its_own_way_is_handed_back() {
        // Integer and bool keys are read from strings by serde_json.
        same::<BTreeMap<u32, bool>>("{\"1\": true, \"20\": false}", false);
        same::<BTreeMap<i8, u8>>("{\"-1\": 1}", false);
        same::<BTreeMap<u8, u8>>("{\"x\": 1}", false);
        // Bytes are read from an array or a string by serde_json.
        same::<Vec<u8>>("[1, 2, 3]", true);
    }

    #[test]
    fn a_string_without_escapes_is_borrowed() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct Borrowed<'a> {
            #[serde(borrow)]
            text: Cow<'a, str>,
            plain: &'a str,
        }
        let text = r#"{"text": "no escape", "plain": "here"}"#;
        let value: Borrowed<'_> = from_str(text).unwrap();
        assert!(matches!(value.text, Cow::Borrowed("no escape")));
        assert_eq!(value.plain, "here");
        let escaped = r#"{"text": "an \"escape\"", "plain": "here"}"#;
        let value: Borrowed<'_> = from_str(escaped).unwrap();
        assert_eq!(value.text, "an \"escape\"");
        // A `&str` cannot hold a string with an escape: serde_json's error.
        let refused = r#"{"text": "t", "plain": "a\nb"}"#;
        assert_eq!(
            from_str::<Borrowed<'_>>(refused).unwrap_err().to_string(),
            serde_json::from_str::<Borrowed<'_>>(refused)
                .unwrap_err()
                .to_string()
        );
    }

    /// A repeatable random number generator (xorshift: tests need
    /// repeatability, not a crate).
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'a>(&mut self, parts: &[&'a str]) -> &'a str {
            parts[self.below(parts.len())]
        }
    }

    /// Pieces of JSON text: the random documents are made of them, and
    /// mutated with them.
    const PIECES: [&str; 26] = [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n",
        "\"",
        "\\",
        "\\n",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\ud83d",
        "é",
        "\u{1}",
        "\t",
        "1",
        "-2.5e3",
        "0",
        "01",
        "null",
        "true",
        "fals",
        "\"k\"",
        "😀",
    ];

    /// A random JSON document (valid) of up to `depth` levels.
    fn document(random: &mut Random, depth: usize, out: &mut String) {
        let space = |random: &mut Random, out: &mut String| {
            out.push_str(random.pick(&["", "", " ", "\n\t ", "\r\n"]))
        };
        space(random, out);
        match random.below(if depth == 0 { 4 } else { 6 }) {
            0 => out.push_str(random.pick(&["null", "true", "false"])),
            1 => out.push_str(random.pick(&[
                "0",
                "-1",
                "42",
                "18446744073709551615",
                "-9.5e-3",
                "1E10",
                "0.25",
            ])),
            2 | 3 => {
                out.push('"');
                for _ in 0..random.below(6) {
                    out.push_str(random.pick(&[
                        "a",
                        "Zz",
                        " ",
                        "é✓",
                        "😀",
                        "\\\"",
                        "\\\\",
                        "\\/",
                        "\\n",
                        "\\t",
                        "\\u00e9",
                        "\\uD83D\\uDE00",
                    ]));
                }
                out.push('"');
            }
            4 => {
                out.push('[');
                for i in 0..random.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    document(random, depth - 1, out);
                }
                space(random, out);
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..random.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    space(random, out);
                    out.push_str(random.pick(&["\"a\"", "\"b\"", "\"\\u0041\"", "\"\"", "\"a\""]));
                    space(random, out);
                    out.push(':');
                    document(random, depth - 1, out);
                }
                space(random, out);
                out.push('}');
            }
        }
        space(random, out);
    }

    /// Random documents, and the same mutated (most of those not JSON):
    /// whatever this reader takes, serde_json reads to the same value;
    /// the rest gets serde_json's answer.
    #[test]
    fn random_documents_are_read_only_as_serde_json_reads_them() {
        let mut random = Random(0x2545_f491_4f6c_dd1d);
        let (mut taken, mut refused) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::new();
            document(&mut random, 4, &mut text);
            same::<Value>(&text, true);
            // One piece put in, replacing up to two characters.
            let mut chars: Vec<char> = text.chars().collect();
            let at = random.below(chars.len() + 1);
            let end = (at + random.below(3)).min(chars.len());
            chars.splice(at..end, random.pick(&PIECES).chars());
            let mutated: String = chars.into_iter().collect();
            let ours = read::<Value>(&mutated);
            match &ours {
                Some(ours) => {
                    assert_eq!(
                        serde_json::from_str::<Value>(&mutated).ok().as_ref(),
                        Some(ours),
                        "{mutated:?}"
                    );
                    taken += 1;
                }
                None => refused += 1,
            }
            same::<Value>(&mutated, ours.is_some());
        }
        assert!(
            taken > 1000 && refused > 1000,
            "both ways exercised ({taken} taken, {refused} refused)"
        );
    }

    #[test]
    fn what_the_writer_writes_is_read_back() {
        let value = json!({
            "text": "héllo ✓ 😀 \"quoted\" back\\slash\ttab\u{7f}\u{1f}".repeat(40),
            "list": [1, -2, 3.5, null, true, {"deep": vec!["x"; 20]}],
        });
        let text = crate::to_string(&value).unwrap();
        same::<Value>(&text, true);
        assert_eq!(from_str::<Value>(&text).unwrap(), value);
    }
}
