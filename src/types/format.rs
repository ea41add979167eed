//! How results are written: value formats shared by every layer that reads or writes results.
//!
//! A result value is a `u64`. Integer results (labels, hop counts) are written as integers;
//! floating-point results (PageRank, LCC, SSSP) store the bit pattern of their `f64`, so that a
//! retraction is bit-exact, and are written in Rust's shortest round-trip form:
//!
//! ```
//! use ripples::types::format::ValueFormat;
//! let mut out = String::new();
//! ValueFormat::Float.write(0.25f64.to_bits(), &mut out);
//! assert_eq!(out, "2.5e-1");
//! out.clear();
//! ValueFormat::Integer.write(ripples::types::format::BFS_UNREACHABLE, &mut out);
//! assert_eq!(out, "9223372036854775807");
//! ```
//!
//! The float form loses nothing: parsing what [`format_f64`] wrote gives back the same bits.
//!
//! ```
//! use ripples::types::format::{format_f64, ValueFormat};
//! for x in [0.14776291666666667f64, 1e-300, 0.0, -0.0, 12345.678] {
//!     let mut out = String::new();
//!     ValueFormat::Float.write(x.to_bits(), &mut out);
//!     assert_eq!(out, format_f64(x));
//!     assert_eq!(out.parse::<f64>().unwrap().to_bits(), x.to_bits());
//! }
//! assert_eq!(format_f64(0.5), "5e-1");
//! assert_eq!(format_f64(f64::INFINITY), "infinity");
//! ```

/// The hop count of a vertex the BFS source does not reach (`i64::MAX`, as Graphalytics writes it).
pub const BFS_UNREACHABLE: u64 = i64::MAX as u64;

/// How the `u64` values of a result are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueFormat {
    /// An unsigned integer.
    Integer,
    /// The bit pattern of an `f64`, written in Rust's shortest round-trip form; infinity is written
    /// `infinity`.
    Float,
}

impl ValueFormat {
    /// Writes `value` in this format.
    pub fn write(&self, value: u64, out: &mut String) {
        use std::fmt::Write;
        match self {
            ValueFormat::Integer => {
                let _ = write!(out, "{}", value);
            }
            ValueFormat::Float => out.push_str(&format_f64(f64::from_bits(value))),
        }
    }
}

/// Rust's shortest representation that parses back to exactly the same `f64` (`{:e}` form, e.g.
/// `1.4776291666666667e-1`); `infinity` for +∞, as Graphalytics writes it.
pub fn format_f64(x: f64) -> String {
    format_value_f64(x)
}

/// Formats a floating-point output value (PR, LCC, SSSP) for an output file.
///
/// The rule: finite values are written in Rust's `{:e}` form, i.e. scientific notation with the
/// *shortest* mantissa that parses back to exactly the same `f64` (`0.5` → `"5e-1"`,
/// `0.14776291666666667` → `"1.4776291666666667e-1"`, `0.0` → `"0e0"`, `-0.0` → `"-0e0"`).
/// Scientific notation keeps very large and very small values short, and the round-trip property
/// means nothing is lost. Positive infinity is written `"infinity"` (the spelling of the
/// Graphalytics expected files), negative infinity `"-infinity"`, NaN `"NaN"`. Everything written
/// here is read back by `parse_f64`.
pub fn format_value_f64(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x == f64::INFINITY {
        "infinity".to_string()
    } else if x == f64::NEG_INFINITY {
        "-infinity".to_string()
    } else {
        format!("{:e}", x)
    }
}

/// How a typed output's rows are written (see `ripples::dataflow::typed`).
///
/// ```
/// use ripples::types::format::RowFormat;
/// assert_eq!(RowFormat::Text.change_line(3, "v1", "2", -1), "3 v1 2 -1\n");
/// assert_eq!(RowFormat::Json.result_line("\"v1\"", "[1,2]"), "{\"key\":\"v1\",\"value\":[1,2]}\n");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFormat {
    /// `Display` text: `epoch key value diff` and `key value` lines.
    Text,
    /// JSON lines: `{"epoch":..,"key":..,"value":..,"diff":..}` and `{"key":..,"value":..}`.
    Json,
}

impl RowFormat {
    /// The change-log line of one change (with its line break).
    pub fn change_line(self, epoch: crate::types::Time, key: &str, value: &str, diff: i8) -> String {
        let mut line = String::new();
        self.push_change_line(&mut line, epoch, key, value, diff);
        line
    }

    /// Appends the change-log line of one change (with its line break) to `out`.
    pub fn push_change_line(self, out: &mut String, epoch: crate::types::Time, key: &str, value: &str, diff: i8) {
        self.push_change_line_at(out, &epoch.to_string(), key, value, diff);
    }

    /// Like [`RowFormat::push_change_line`] with the epoch's text given (written once for all of
    /// an epoch's lines).
    pub fn push_change_line_at(self, out: &mut String, epoch: &str, key: &str, value: &str, diff: i8) {
        let diff = if diff > 0 { "1" } else { "-1" };
        match self {
            RowFormat::Text => {
                for part in [epoch, " ", key, " ", value, " ", diff, "\n"] {
                    out.push_str(part);
                }
            }
            RowFormat::Json => {
                for part in ["{\"epoch\":", epoch, ",\"key\":", key, ",\"value\":", value, ",\"diff\":", diff, "}\n"] {
                    out.push_str(part);
                }
            }
        }
    }

    /// The result-file line of one record (with its line break).
    pub fn result_line(self, key: &str, value: &str) -> String {
        match self {
            RowFormat::Text => format!("{key} {value}\n"),
            RowFormat::Json => format!("{{\"key\":{key},\"value\":{value}}}\n"),
        }
    }
}

/// The SQL type a typed output's key or value is served as (`--serve`): integers as BIGINT,
/// floats as DOUBLE PRECISION, everything else (strings, other `Display` values, JSON text) as
/// TEXT.
///
/// ```
/// use ripples::types::format::ColumnType;
/// assert_eq!(ColumnType::of::<u32>(), ColumnType::Integer);
/// assert_eq!(ColumnType::of::<f64>(), ColumnType::Float);
/// assert_eq!(ColumnType::of::<String>(), ColumnType::Text);
/// assert_eq!(ColumnType::of::<(u64, u64)>(), ColumnType::Text);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// A Rust integer type: BIGINT (a value outside `i64` stops the serving run).
    Integer,
    /// `f32`, `f64` (and the typed dataflows' `Float`): DOUBLE PRECISION.
    Float,
    /// Any other type: its text.
    Text,
}

impl ColumnType {
    /// The column type of Rust type `T` (a primitive integer or float, else text).
    pub fn of<T: 'static>() -> ColumnType {
        use std::any::TypeId;
        let t = TypeId::of::<T>();
        let integers = [
            TypeId::of::<u8>(),
            TypeId::of::<u16>(),
            TypeId::of::<u32>(),
            TypeId::of::<u64>(),
            TypeId::of::<u128>(),
            TypeId::of::<usize>(),
            TypeId::of::<i8>(),
            TypeId::of::<i16>(),
            TypeId::of::<i32>(),
            TypeId::of::<i64>(),
            TypeId::of::<i128>(),
            TypeId::of::<isize>(),
        ];
        if integers.contains(&t) {
            ColumnType::Integer
        } else if t == TypeId::of::<f64>() || t == TypeId::of::<f32>() {
            ColumnType::Float
        } else {
            ColumnType::Text
        }
    }

    /// The type SQLite declares for the column (what `psql`'s `\d` shows as bigint, double
    /// precision, text).
    pub fn sqlite(self) -> &'static str {
        match self {
            ColumnType::Integer => "BIGINT",
            ColumnType::Float => "REAL",
            ColumnType::Text => "TEXT",
        }
    }
}
