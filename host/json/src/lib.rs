//! JSON text exactly as `serde_json::to_string` writes it, byte for byte,
//! with strings scanned many bytes at a time (64 a step natively and in
//! WebAssembly guests built with `simd128`, 32 in four `u64`s in other
//! guests); JSON text read exactly as `serde_json::from_str` reads it, with
//! the same scan ([`from_str`]); and a text result (one JSON string) read
//! back the same way ([`string_value`], [`is_plain_string`]).
//!
//! Used wherever toolhost turns a large value into JSON text on a call's
//! path: in plugins (the SDK writes results and nested calls' arguments with
//! it, and reads arguments and nested calls' results with [`from_str`]), in
//! the host (a call's arguments for the guest) and in the MCP stdio
//! transport (every answer); and where the host reads a tool's text result
//! (the output check, the MCP result).
//!
//! Written here rather than taken from a crate: serde_json's serializer
//! looks at a string one byte at a time (a table lookup and a branch per
//! byte). Natively that is cheap; inside a WebAssembly guest it costs tens
//! of instructions, and as many units of fuel, per byte, and a plugin
//! returning a large text spent most of its call escaping it
//! (`BENCHMARKS.md` at the repository's root has the figures). No maintained crate escapes
//! faster on `wasm32` while keeping serde_json's exact output, and the
//! output must not change: clients, plugins and tests read it. So this crate
//! writes the shapes values are made of itself, with serde_json's own number
//! formatting, and hands anything else back to serde_json: map keys that are
//! neither strings nor integers, serde_json's own number and raw-value
//! types, and any value whose `Serialize` fails. serde_json's answer (or
//! error) is then the result, so the output is serde_json's in every case.
//!
//! ```
//! let value = serde_json::json!({"name": "Ada \"the Countess\"", "n": [1, 2.5]});
//! assert_eq!(toolhost_json::to_string(&value).unwrap(), serde_json::to_string(&value).unwrap());
//! ```

use std::borrow::Cow;
use std::fmt::{self, Display, Write as _};
use std::io;

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::ser::{CompactFormatter, Formatter};

mod read;

pub use read::from_str;

/// `value` as compact JSON text, identical to `serde_json::to_string`'s
/// (the same text, or the same error).
///
/// # Errors
///
/// serde_json's error for a value it cannot serialize (a map whose keys are
/// not strings, a failing `Serialize` implementation).
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    match fast(value) {
        Some(text) => Ok(text),
        None => serde_json::to_string(value),
    }
}

/// `value` as compact JSON bytes, identical to `serde_json::to_vec`'s.
///
/// # Errors
///
/// As [`to_string`].
pub fn to_vec<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<Vec<u8>> {
    to_string(value).map(String::into_bytes)
}

/// The value of `text` when `text` is one JSON string and nothing else (no
/// whitespace around it) whose escapes are all short ones (`\"`, `\\`,
/// `\/`, `\b`, `\f`, `\n`, `\r`, `\t`); `None` otherwise, and then
/// `serde_json` is the judge (it reads `\uXXXX` escapes and the rest of
/// JSON).
///
/// `Some` only where `serde_json::from_str::<String>(text)` reads the same
/// string. Borrowed from `text` when there is no escape to undo. Used where
/// a tool's result is read back on the host: a text result is one JSON
/// string, and serde_json reads strings eight bytes at a time where this
/// reads 64 (on x86-64 and AArch64; see `plain_run`).
///
/// ```
/// assert_eq!(toolhost_json::string_value(r#""a\tb""#).as_deref(), Some("a\tb"));
/// assert_eq!(toolhost_json::string_value(r#""\u00e9""#), None); // serde_json's to read
/// assert_eq!(toolhost_json::string_value(r#" "a""#), None);
/// ```
pub fn string_value(text: &str) -> Option<Cow<'_, str>> {
    let inner = string_inner(text)?;
    let mut value = None;
    read_string(inner, Some(&mut value)).then(|| value.map_or(Cow::Borrowed(inner), Cow::Owned))
}

/// Whether `text` is one JSON string as [`string_value`] takes it (`false`
/// says nothing: serde_json is the judge), checked without building its
/// value.
pub fn is_plain_string(text: &str) -> bool {
    string_inner(text).is_some_and(|inner| read_string(inner, None))
}

/// `text` without its opening and closing quotes.
fn string_inner(text: &str) -> Option<&str> {
    text.strip_prefix('"')?.strip_suffix('"')
}

/// Reads `inner` (a JSON string without its quotes), building its value in
/// `value` when asked (left `None` when there is no escape). `false` at a
/// quote, a control character, a `\u` or an unknown escape, and at a
/// backslash that escapes the closing quote.
fn read_string(inner: &str, mut value: Option<&mut Option<String>>) -> bool {
    let bytes = inner.as_bytes();
    let mut start = 0;
    loop {
        let end = start + bytes.get(start..).map_or(0, plain_run);
        let Some(&byte) = bytes.get(end) else {
            if let Some(Some(value)) = value {
                value.push_str(inner.get(start..).unwrap_or_default());
            }
            return true;
        };
        if byte != b'\\' {
            return false;
        }
        let Some(unescaped) = bytes.get(end + 1).copied().and_then(short_escape) else {
            return false;
        };
        if let Some(value) = value.as_deref_mut() {
            // Runs end at ASCII bytes, so these are character boundaries.
            let value = value.get_or_insert_with(|| String::with_capacity(inner.len()));
            value.push_str(inner.get(start..end).unwrap_or_default());
            value.push(unescaped);
        }
        start = end + 2;
    }
}

/// The character a short escape (a backslash, then `byte`) stands for:
/// `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r` or `\t`.
#[inline]
fn short_escape(byte: u8) -> Option<char> {
    Some(match byte {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// `value` written by this crate's serializer, or `None` when it hands the
/// value back to serde_json.
fn fast<T: ?Sized + Serialize>(value: &T) -> Option<String> {
    let mut writer = Writer {
        out: String::with_capacity(128),
    };
    value.serialize(&mut writer).ok()?;
    Some(writer.out)
}

/// "Let serde_json write this value": the only error of this serializer.
#[derive(Debug)]
struct HandBack;

impl Display for HandBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("handed back to serde_json")
    }
}

impl std::error::Error for HandBack {}

impl ser::Error for HandBack {
    fn custom<T: Display>(_: T) -> Self {
        HandBack
    }
}

type Done = Result<(), HandBack>;

/// The JSON text written so far.
struct Writer {
    out: String,
}

/// Bytes with a one in each byte.
const ONES: u64 = u64::MAX / 255;

/// The high bit of each byte of `chunk` (eight bytes, little-endian) that
/// JSON requires escaped: a control character (below 0x20), `"` or `\`.
/// The lowest bit set marks the first such byte exactly; higher bits may
/// also be set above it (a borrow), so only the lowest is meaningful. Zero
/// when none of the eight needs escaping. The same test serde_json's reader
/// uses to skip a string's plain bytes.
#[inline]
fn needs_escape(chunk: u64) -> u64 {
    let control = chunk.wrapping_sub(ONES * 0x20) & !chunk;
    let quote = chunk ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = chunk ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & (ONES << 7)
}

/// Whether JSON requires `byte` escaped: a control character (below 0x20),
/// `"` or `\\`.
#[inline]
fn needs(byte: u8) -> bool {
    (byte < 0x20) | (byte == b'"') | (byte == b'\\')
}

/// How many bytes at the start of `bytes` need no escaping: up to the first
/// byte that does, or all of them. On x86-64 and AArch64, 64 and then 16
/// bytes a step first (the loops compile to vector compares); in
/// WebAssembly with its vector instructions (`simd128`) the same in `v128`s
/// ([`simd_run`]); elsewhere 32 bytes a step in four `u64`s
/// ([`words_run`]); then the exact place eight bytes at a time
/// ([`word_run`]).
#[inline]
fn plain_run(bytes: &[u8]) -> usize {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    let plain = vector_run(bytes);
    #[cfg(all(target_family = "wasm", target_feature = "simd128"))]
    let plain = simd_run(bytes);
    #[cfg(not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        all(target_family = "wasm", target_feature = "simd128")
    )))]
    let plain = words_run(bytes);
    plain + bytes.get(plain..).map_or(0, word_run)
}

/// A multiple of 16 bytes, up to the first 16 that hold a byte to escape,
/// in WebAssembly vectors (`v128`): 64 bytes a step, then 16. For guests
/// built with the `simd128` target feature (this repository's plugins are:
/// `.cargo/config.toml`); the loop [`vector_run`] uses natively is not
/// turned into vector instructions for WebAssembly by the compiler.
#[cfg(all(target_family = "wasm", target_feature = "simd128"))]
#[inline]
fn simd_run(bytes: &[u8]) -> usize {
    use core::arch::wasm32::{i8x16_eq, u8x16_lt, u8x16_splat, v128, v128_any_true, v128_or};
    // Which of 16 bytes need escaping (all ones in their lanes).
    let test = |chunk: &[u8]| -> v128 {
        if chunk.len() < 16 {
            // Never: every chunk has 16 bytes. Zeros need escaping, so the
            // loop would only stop early.
            return u8x16_splat(0);
        }
        // SAFETY: `chunk` has 16 readable bytes, all a `v128` reads;
        // `read_unaligned` needs no alignment (WebAssembly's `v128.load`
        // has none either). (Building the vector from 16 bytes without
        // `unsafe` compiles to 16 lane insertions, which cost far more
        // fuel: `BENCHMARKS.md`.)
        let v = unsafe { core::ptr::read_unaligned(chunk.as_ptr().cast::<v128>()) };
        let control = u8x16_lt(v, u8x16_splat(0x20));
        let quote = i8x16_eq(v, u8x16_splat(b'"'));
        let backslash = i8x16_eq(v, u8x16_splat(b'\\'));
        v128_or(control, v128_or(quote, backslash))
    };
    let mut plain = 0;
    for chunk in bytes.chunks_exact(64) {
        let (low, high) = chunk.split_at(32);
        let (a, b) = low.split_at(16);
        let (c, d) = high.split_at(16);
        if v128_any_true(v128_or(v128_or(test(a), test(b)), v128_or(test(c), test(d)))) {
            break;
        }
        plain += 64;
    }
    for chunk in bytes.get(plain..).unwrap_or_default().chunks_exact(16) {
        if v128_any_true(test(chunk)) {
            break;
        }
        plain += 16;
    }
    plain
}

/// A multiple of 16 bytes, up to the first 16 that hold a byte to escape:
/// 64 bytes a step while nothing needs escaping (faster over long strings
/// than 16 a step: the test for any byte found costs the same for four
/// vectors as for one), then 16.
///
/// On x86-64 processors with AVX2 (detected once, at run time) the same
/// loop runs compiled for 32-byte vectors ([`vector_run_avx2`]), about twice
/// as fast as SSE2, the baseline every x86-64 has (`BENCHMARKS.md`).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline]
fn vector_run(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= AVX2_FROM && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, the one feature the function is
        // compiled for (checked just above).
        return unsafe { vector_run_avx2(bytes) };
    }
    vector_run_baseline(bytes)
}

/// From this length on, a scan runs the AVX2 build. Shorter ones (most of a
/// message's strings: keys, names, ids) stay in the baseline loop, which is
/// inlined into its caller: the AVX2 build is a call that cannot be, and
/// saves a few nanoseconds at most on a run this short.
#[cfg(target_arch = "x86_64")]
const AVX2_FROM: usize = 256;

/// [`vector_run_baseline`] compiled for AVX2.
///
/// # Safety
///
/// The processor must have AVX2 (`is_x86_feature_detected!("avx2")`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn vector_run_avx2(bytes: &[u8]) -> usize {
    vector_run_baseline(bytes)
}

/// [`vector_run`]'s loop, for whatever vectors the caller is compiled for.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn vector_run_baseline(bytes: &[u8]) -> usize {
    let mut plain = 0;
    for chunk in bytes.chunks_exact(64) {
        if chunk.iter().fold(false, |any, &byte| any | needs(byte)) {
            break;
        }
        plain += 64;
    }
    for chunk in bytes.get(plain..).unwrap_or_default().chunks_exact(16) {
        if chunk.iter().fold(false, |any, &byte| any | needs(byte)) {
            break;
        }
        plain += 16;
    }
    plain
}

/// A multiple of 32 bytes, up to the first 32 that hold a byte to escape,
/// tested as four `u64`s with one branch: inside a WebAssembly guest it
/// costs less fuel than eight bytes a step (`BENCHMARKS.md`).
#[cfg_attr(
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        all(target_family = "wasm", target_feature = "simd128")
    ),
    allow(dead_code)
)]
#[inline]
fn words_run(bytes: &[u8]) -> usize {
    let mut plain = 0;
    for chunk in bytes.chunks_exact(32) {
        // (Never `None`: a chunk holds four words. Zeros would need
        // escaping, so the loop would only stop early.)
        let word = |at: usize| {
            let word = chunk.get(at..at + 8).and_then(|w| w.try_into().ok());
            needs_escape(u64::from_le_bytes(word.unwrap_or([0; 8])))
        };
        if word(0) | word(8) | word(16) | word(24) != 0 {
            break;
        }
        plain += 32;
    }
    plain
}

/// The exact length of the plain run at the start of `bytes`: eight bytes
/// at a time in a `u64`, then the last few one by one.
#[inline]
fn word_run(bytes: &[u8]) -> usize {
    let mut plain = 0;
    for chunk in bytes.chunks_exact(8) {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let found = needs_escape(u64::from_le_bytes(chunk));
        if found != 0 {
            return plain + (found.trailing_zeros() / 8) as usize;
        }
        plain += 8;
    }
    while bytes.get(plain).is_some_and(|&byte| !needs(byte)) {
        plain += 1;
    }
    plain
}

/// How serde_json escapes `byte`, if it does.
#[inline]
fn escape(byte: u8) -> Option<&'static str> {
    /// `\u00XX` for the control characters without a short form.
    const CONTROL: [&str; 32] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007", "\\b", "\\t",
        "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012", "\\u0013",
        "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c",
        "\\u001d", "\\u001e", "\\u001f",
    ];
    match byte {
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        0..0x20 => CONTROL.get(usize::from(byte)).copied(),
        _ => None,
    }
}

/// Lets serde_json's formatter write numbers (always ASCII) into a `String`.
struct Ascii<'a>(&'a mut String);

impl io::Write for Ascii<'_> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = std::str::from_utf8(buf).map_err(io::Error::other)?;
        self.0.push_str(text);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The room a long string's write leaves after it (see [`Writer::string`]).
const TAIL_ROOM: usize = 256;

impl Writer {
    /// `text` as a JSON string: quoted, with serde_json's escapes.
    #[inline]
    fn string(&mut self, text: &str) {
        let bytes = text.as_bytes();
        // A long string leaves room for what follows it (a closing brace,
        // the rest of an envelope): otherwise the buffer, grown to the
        // string's size, grows again a few bytes later and copies the
        // string a second time (a 16 KiB result in an MCP response did).
        let need = bytes.len() + 2;
        self.out
            .reserve(if need < TAIL_ROOM { need } else { need + TAIL_ROOM });
        self.out.push('"');
        // Runs of plain bytes are written whole. A run starts at the text's
        // start or just past an escaped (ASCII) byte and ends at one or at
        // the text's end, so slicing `text` there is on a character boundary.
        let mut start = 0;
        loop {
            let end = start + bytes.get(start..).map_or(0, plain_run);
            // `text[start..end]` needs no escaping; `bytes[end]`, if any, does.
            self.out.push_str(&text[start..end]);
            let Some(escaped) = bytes.get(end).copied().and_then(escape) else {
                break;
            };
            self.out.push_str(escaped);
            start = end + 1;
        }
        self.out.push('"');
    }

    fn number(
        &mut self,
        write: impl FnOnce(&mut CompactFormatter, &mut Ascii<'_>) -> io::Result<()>,
    ) -> Done {
        write(&mut CompactFormatter, &mut Ascii(&mut self.out)).map_err(|_| HandBack)
    }

    #[inline]
    fn raw(&mut self, text: &str) -> Done {
        self.out.push_str(text);
        Ok(())
    }

    /// Opens `{"VARIANT":`, for the enum variants serde_json writes as a
    /// one-entry object.
    #[inline]
    fn variant(&mut self, variant: &str) {
        self.out.push('{');
        self.string(variant);
        self.out.push(':');
    }

    /// `value`'s `Display` text as a JSON string. As serde_json: a `Display`
    /// that fails is an error (serde's default would panic).
    fn collect(&mut self, value: &(impl ?Sized + Display)) -> Done {
        let mut text = String::new();
        write!(text, "{value}").map_err(|_| HandBack)?;
        self.string(&text);
        Ok(())
    }
}

macro_rules! numbers {
    ($($method:ident $write:ident $ty:ty),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Done {
            self.number(|f, w| f.$write(w, v))
        })*
    };
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = HandBack;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    numbers!(
        serialize_i8 write_i8 i8, serialize_i16 write_i16 i16, serialize_i32 write_i32 i32,
        serialize_i64 write_i64 i64, serialize_i128 write_i128 i128,
        serialize_u8 write_u8 u8, serialize_u16 write_u16 u16, serialize_u32 write_u32 u32,
        serialize_u64 write_u64 u64, serialize_u128 write_u128 u128,
    );

    fn serialize_bool(self, v: bool) -> Done {
        self.raw(if v { "true" } else { "false" })
    }

    /// As serde_json: a number that JSON cannot write (NaN, infinity) is `null`.
    fn serialize_f32(self, v: f32) -> Done {
        if v.is_finite() {
            self.number(|f, w| f.write_f32(w, v))
        } else {
            self.raw("null")
        }
    }

    fn serialize_f64(self, v: f64) -> Done {
        if v.is_finite() {
            self.number(|f, w| f.write_f64(w, v))
        } else {
            self.raw("null")
        }
    }

    fn serialize_char(self, v: char) -> Done {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Done {
        self.string(v);
        Ok(())
    }

    /// As serde_json: an array of numbers.
    fn serialize_bytes(self, v: &[u8]) -> Done {
        let mut seq = ser::Serializer::serialize_seq(self, Some(v.len()))?;
        for byte in v {
            ser::SerializeSeq::serialize_element(&mut seq, byte)?;
        }
        ser::SerializeSeq::end(seq)
    }

    fn serialize_none(self) -> Done {
        self.raw("null")
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Done {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Done {
        self.raw("null")
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Done {
        self.raw("null")
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Done {
        self.string(variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, value: &T) -> Done {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Done {
        self.variant(variant);
        value.serialize(&mut *self)?;
        self.raw("}")
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, HandBack> {
        Ok(Compound::open(self, "[", "]"))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Compound<'a>, HandBack> {
        Ok(Compound::open(self, "[", "]"))
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'a>, HandBack> {
        Ok(Compound::open(self, "[", "]"))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, HandBack> {
        self.variant(variant);
        Ok(Compound::open(self, "[", "]}"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, HandBack> {
        Ok(Compound::open(self, "{", "}"))
    }

    /// serde_json's own types (`Number` with `arbitrary_precision`,
    /// `RawValue`) are structs with reserved names: serde_json writes those.
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'a>, HandBack> {
        if name.starts_with("$serde_json::") {
            return Err(HandBack);
        }
        Ok(Compound::open(self, "{", "}"))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, HandBack> {
        self.variant(variant);
        Ok(Compound::open(self, "{", "}}"))
    }

    fn collect_str<T: ?Sized + Display>(self, value: &T) -> Done {
        self.collect(value)
    }
}

/// An array or object being written: commas between its items, and its
/// closing bracket(s) at the end.
struct Compound<'a> {
    writer: &'a mut Writer,
    first: bool,
    close: &'static str,
}

impl<'a> Compound<'a> {
    #[inline]
    fn open(writer: &'a mut Writer, open: &str, close: &'static str) -> Self {
        writer.out.push_str(open);
        Compound {
            writer,
            first: true,
            close,
        }
    }

    #[inline]
    fn comma(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.writer.out.push(',');
        }
    }

    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        self.comma();
        value.serialize(&mut *self.writer)
    }

    fn field<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Done {
        self.comma();
        self.writer.string(key);
        self.writer.out.push(':');
        value.serialize(&mut *self.writer)
    }

    #[inline]
    fn finish(self) -> Done {
        self.writer.raw(self.close)
    }
}

/// The array and object serializers: each item is written by `$write` (an
/// array's element, or an object's field), and `end` closes the brackets.
macro_rules! compound {
    ($($trait:ident $method:ident $write:ident $(, $key:ident)?);* $(;)?) => {
        $(impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = HandBack;

            fn $method<T: ?Sized + Serialize>(&mut self, $($key: &'static str,)? value: &T) -> Done {
                self.$write($($key,)? value)
            }

            fn end(self) -> Done {
                self.finish()
            }
        })*
    };
}

compound! {
    SerializeSeq serialize_element element;
    SerializeTuple serialize_element element;
    SerializeTupleStruct serialize_field element;
    SerializeTupleVariant serialize_field element;
    SerializeStruct serialize_field field, key;
    SerializeStructVariant serialize_field field, key;
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = HandBack;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Done {
        self.comma();
        key.serialize(Key(&mut *self.writer))
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        self.writer.out.push(':');
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Done {
        self.finish()
    }
}

/// A map key: strings, characters, unit variants and newtypes of those are
/// written as serde_json writes them, integers quoted as serde_json does;
/// every other kind of key is handed back to serde_json (which accepts some,
/// such as booleans, and refuses the rest with its own error).
struct Key<'a>(&'a mut Writer);

macro_rules! integer_keys {
    ($($method:ident $write:ident $ty:ty),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Done {
            self.0.out.push('"');
            self.0.number(|f, w| f.$write(w, v))?;
            self.0.raw("\"")
        })*
    };
}

macro_rules! hand_back {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Done {
            Err(HandBack)
        })*
    };
}

impl ser::Serializer for Key<'_> {
    type Ok = ();
    type Error = HandBack;
    type SerializeSeq = Impossible<(), HandBack>;
    type SerializeTuple = Impossible<(), HandBack>;
    type SerializeTupleStruct = Impossible<(), HandBack>;
    type SerializeTupleVariant = Impossible<(), HandBack>;
    type SerializeMap = Impossible<(), HandBack>;
    type SerializeStruct = Impossible<(), HandBack>;
    type SerializeStructVariant = Impossible<(), HandBack>;

    integer_keys!(
        serialize_i8 write_i8 i8, serialize_i16 write_i16 i16, serialize_i32 write_i32 i32,
        serialize_i64 write_i64 i64, serialize_i128 write_i128 i128,
        serialize_u8 write_u8 u8, serialize_u16 write_u16 u16, serialize_u32 write_u32 u32,
        serialize_u64 write_u64 u64, serialize_u128 write_u128 u128,
    );

    hand_back!(
        serialize_bool(bool),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
    );

    fn serialize_char(self, v: char) -> Done {
        self.0.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Done {
        self.0.string(v);
        Ok(())
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Done {
        self.0.string(variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, value: &T) -> Done {
        value.serialize(self)
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Done {
        Err(HandBack)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Done {
        Err(HandBack)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, HandBack> {
        Err(HandBack)
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, HandBack> {
        Err(HandBack)
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, HandBack> {
        Err(HandBack)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, HandBack> {
        Err(HandBack)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, HandBack> {
        Err(HandBack)
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, HandBack> {
        Err(HandBack)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, HandBack> {
        Err(HandBack)
    }

    fn collect_str<T: ?Sized + Display>(self, value: &T) -> Done {
        self.0.collect(value)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Serialize;
    use serde_json::json;

    use super::*;

    /// Asserts that this crate writes `value` as serde_json does, and
    /// (when `own` is set) that it wrote it itself rather than handing it
    /// back.
    #[track_caller]
    fn same<T: Serialize + fmt::Debug>(value: &T, own: bool) {
        let ours = to_string(value).map_err(|e| e.to_string());
        let theirs = serde_json::to_string(value).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "{value:?}");
        assert_eq!(fast(value).is_some(), own, "written by this crate: {value:?}");
    }

    #[test]
    fn every_ascii_byte_at_every_offset_in_a_chunk_is_escaped_as_serde_json_does() {
        // Offsets in and past a 16-byte chunk, an 8-byte one and the tail.
        for byte in 0u8..0x80 {
            for at in 0..40 {
                let mut text: Vec<char> = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNO".chars().collect();
                text[at] = char::from(byte);
                let text: String = text.into_iter().collect();
                same(&text, true);
            }
        }
    }

    /// The plain run by the definition, one byte at a time.
    fn plain_run_by_bytes(bytes: &[u8]) -> usize {
        bytes.iter().position(|&b| needs(b)).unwrap_or(bytes.len())
    }

    /// What each of the vector loops this processor can run finds: the
    /// baseline's and, where the processor has AVX2, the AVX2 build's.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn vector_runs(bytes: &[u8]) -> Vec<usize> {
        let mut runs = vec![vector_run(bytes), vector_run_baseline(bytes)];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (checked just above).
            runs.push(unsafe { vector_run_avx2(bytes) });
        }
        runs
    }

    /// Every way of finding the plain run (the vector loops, the word loops
    /// WebAssembly guests use, the exact tail) agrees with the definition,
    /// whatever byte stops it and wherever it is.
    #[test]
    fn every_scan_finds_the_first_byte_to_escape() {
        for len in [0, 7, 8, 31, 32, 33, 64, 100, 150, 255, 256, 300, 520] {
            for at in 0..=len {
                for byte in (0u8..0x80).chain([0xc3, 0xff]) {
                    let mut bytes = vec![b'a'; len];
                    if let Some(b) = bytes.get_mut(at) {
                        *b = byte;
                    }
                    let expected = plain_run_by_bytes(&bytes);
                    assert_eq!(plain_run(&bytes), expected, "{len} {at} {byte}");
                    let words = words_run(&bytes);
                    assert!(words.is_multiple_of(32) && words <= expected, "{len} {at} {byte}");
                    assert_eq!(words + word_run(&bytes[words..]), expected, "{len} {at} {byte}");
                    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
                    for vector in vector_runs(&bytes) {
                        assert!(
                            vector.is_multiple_of(16) && vector <= expected,
                            "{len} {at} {byte}"
                        );
                        assert_eq!(vector + word_run(&bytes[vector..]), expected, "{len} {at} {byte}");
                    }
                }
            }
        }
    }

    #[test]
    fn unicode_runs_and_escapes_mixed() {
        for text in [
            "",
            "\"",
            "\\",
            "héllo ✓ 😀 \"quoted\" back\\slash\ttab\u{7f}\u{2028}",
            "ünïcödé only, no escape at all, long enough for chunks",
            "\u{0}\u{1f}\u{20}\u{21}",
            "😀😀😀😀\n😀😀😀😀",
        ] {
            same(&text, true);
            same(&text.repeat(37), true);
        }
    }

    /// `count` repeatable random texts of up to `max_len` of `parts` each
    /// (a xorshift generator: tests need repeatability, not a crate).
    fn random_texts<'p>(
        parts: &'p [&str],
        seed: u64,
        count: usize,
        max_len: u64,
    ) -> impl Iterator<Item = String> + 'p {
        let mut state = seed;
        (0..count).map(move |_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % max_len) as usize;
            (0..len)
                .map(|i| parts[((state >> (i % 50)) as usize + i * 7) % parts.len()])
                .collect()
        })
    }

    #[test]
    fn random_strings_match_serde_json() {
        let alphabet = [
            "a", "Z", " ", "\"", "\\", "\n", "\u{1}", "\u{1f}", "é", "✓", "😀", "\u{7f}", "/",
        ];
        for text in random_texts(&alphabet, 0x2545_f491_4f6c_dd1d, 2000, 70) {
            same(&text, true);
        }
    }

    /// Asserts that `string_value` reads `text` as serde_json does when it
    /// reads it at all, and that `is_plain_string` agrees with it.
    #[track_caller]
    fn read_as_serde_json(text: &str) -> bool {
        let ours = string_value(text);
        assert_eq!(is_plain_string(text), ours.is_some(), "{text:?}");
        if let Some(ours) = &ours {
            let theirs = serde_json::from_str::<String>(text);
            assert_eq!(theirs.as_deref().ok(), Some(&**ours), "{text:?}");
        }
        ours.is_some()
    }

    #[test]
    fn strings_are_read_back_as_serde_json_reads_them() {
        // Every string this crate writes with short escapes only is read.
        let alphabet = [
            "a", "Z", " ", "\"", "\\", "\n", "\t", "\r", "\u{8}", "\u{c}", "é", "✓", "😀", "\u{7f}", "/",
        ];
        for text in random_texts(&alphabet, 0x9e37_79b9_7f4a_7c15, 3000, 90) {
            let json = to_string(&text).unwrap();
            assert!(read_as_serde_json(&json), "{json:?}");
            assert_eq!(string_value(&json).as_deref(), Some(text.as_str()));
        }
        // Borrowed when there is nothing to undo.
        assert!(matches!(string_value("\"plain\""), Some(Cow::Borrowed("plain"))));
    }

    #[test]
    fn what_is_not_one_plain_string_is_left_to_serde_json() {
        for text in [
            "",
            "\"",
            "\"\\\"",
            "\"a\"\"",
            "\"a\" ",
            " \"a\"",
            "\"a\"\n",
            "\"\\u00e9\"",
            "\"\\x\"",
            "\"tab\there\"",
            "\"nul\u{0}\"",
            "\"a\\\"",
            "\"a\" \"b\"",
            "\"a\",\"b\"",
            "[\"a\"]",
            "{\"a\":\"b\"}",
            "1",
            "null",
        ] {
            assert!(!read_as_serde_json(text), "{text:?}");
        }
        // Random texts made of a JSON string's parts: whatever is read is
        // read as serde_json reads it (the checks in `read_as_serde_json`).
        let parts = ["\"", "\\", "a", "n", "u", "00e9", "\u{1}", "\t", "é", "/", " "];
        let mut read = 0;
        for body in random_texts(&parts, 0x2545_f491_4f6c_dd1d, 20000, 40) {
            read += usize::from(read_as_serde_json(&format!("\"{body}\"")));
        }
        assert!(
            read > 100,
            "the random texts exercise the fast path ({read} read)"
        );
    }

    #[derive(Debug, Serialize)]
    struct Unit;

    #[derive(Debug, Serialize)]
    struct Newtype(String);

    #[derive(Debug, Serialize)]
    struct Pair(i32, Option<f64>);

    #[derive(Debug, Serialize)]
    enum Shape {
        Empty,
        Wrapped(u8),
        Tuple(i8, char),
        Fields {
            name: &'static str,
            tags: Vec<&'static str>,
        },
    }

    #[derive(Debug, Serialize)]
    struct Everything {
        unit: (),
        unit_struct: Unit,
        newtype: Newtype,
        pair: Pair,
        shapes: Vec<Shape>,
        numbers: (i8, i16, i32, i64, i128, u8, u16, u32, u64, u128),
        floats: (f32, f64, f64, f64, f64),
        flags: (bool, bool),
        empty: Vec<u8>,
        nothing: Option<String>,
        renamed_key: BTreeMap<&'static str, Shape>,
        int_keys: BTreeMap<i64, &'static str>,
        char_keys: BTreeMap<char, u8>,
    }

    #[test]
    fn every_serde_shape_matches_serde_json() {
        let value = Everything {
            unit: (),
            unit_struct: Unit,
            newtype: Newtype("new\ttype".into()),
            pair: Pair(-3, Some(0.1)),
            shapes: vec![
                Shape::Empty,
                Shape::Wrapped(7),
                Shape::Tuple(-1, '"'),
                Shape::Fields {
                    name: "n",
                    tags: vec!["a", "b\\"],
                },
            ],
            numbers: (
                i8::MIN,
                i16::MIN,
                i32::MIN,
                i64::MIN,
                i128::MIN,
                u8::MAX,
                u16::MAX,
                u32::MAX,
                u64::MAX,
                u128::MAX,
            ),
            floats: (1.5e-7, -0.0, 1e300, f64::NAN, f64::INFINITY),
            flags: (true, false),
            empty: vec![],
            nothing: None,
            renamed_key: BTreeMap::from([("k\"ey", Shape::Empty)]),
            int_keys: BTreeMap::from([(-5, "minus five"), (12, "twelve")]),
            char_keys: BTreeMap::from([('\n', 1)]),
        };
        same(&value, true);
        same(&f32::NAN, true);
        same(&json!({"a": [1, 2.5, null, true, {"b": "c\u{0}"}], "": {}}), true);
    }

    #[derive(Debug)]
    struct Bytes(&'static [u8]);

    impl Serialize for Bytes {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    #[derive(Debug)]
    struct Collected(std::net::Ipv6Addr);

    impl Serialize for Collected {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(&self.0)
        }
    }

    #[test]
    fn bytes_and_collected_strings_match_serde_json() {
        same(&Bytes(b"\x00\xff"), true);
        same(&Collected(std::net::Ipv6Addr::LOCALHOST), true);
    }

    #[derive(Debug)]
    struct Failing;

    impl Serialize for Failing {
        fn serialize<S: ser::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(ser::Error::custom("this value refuses"))
        }
    }

    #[test]
    fn what_this_crate_does_not_write_serde_json_writes_or_refuses() {
        // Keys serde_json accepts in its own way.
        same(&HashMap::from([(true, 1)]), false);
        same(&BTreeMap::from([(Some("k"), 1)]), false);
        // Keys serde_json refuses, with its error.
        same(&BTreeMap::from([(vec![1], 1)]), false);
        // A value whose Serialize fails: serde_json's error (its message).
        same(&vec![Failing], false);
    }
}
