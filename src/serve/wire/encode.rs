//! Values between SQLite and the wire: result rows encoded in the portal's formats (text or
//! binary), the text of a value, a subscription's values as the change log writes them, and a
//! portal's parameters decoded.

use std::sync::Arc;

use futures::stream;
use pgwire::api::portal::{Format, Portal};
use pgwire::api::results::{DataRowEncoder, FieldInfo, QueryResponse};
use pgwire::api::Type;
use pgwire::error::PgWireResult;
use rusqlite::types::Value;

use super::query::ResultSet;
use crate::serve::sql::SqlError;
use crate::types::format::{format_f64, ValueFormat};

/// A result set as a query response (row description and data rows) in `format`.
pub(super) fn encode(rs: &ResultSet, format: &Format) -> PgWireResult<QueryResponse> {
    let fields = fields(rs, format);
    let mut out = Vec::with_capacity(rs.rows.len());
    let mut enc = DataRowEncoder::new(fields.clone());
    for row in &rs.rows {
        for (v, (_, ty)) in row.iter().zip(&rs.columns) {
            match (v, ty) {
                (Value::Null, _) => enc.encode_field(&None::<i64>)?,
                (Value::Integer(i), &Type::INT8) => enc.encode_field(i)?,
                (Value::Real(f), &Type::INT8) => enc.encode_field(&(*f as i64))?,
                (Value::Real(f), &Type::FLOAT8) => enc.encode_field(f)?,
                (Value::Integer(i), &Type::FLOAT8) => enc.encode_field(&(*i as f64))?,
                (Value::Blob(b), &Type::BYTEA) => enc.encode_field(b)?,
                (other, _) => enc.encode_field(&text(other))?,
            }
        }
        out.push(Ok(enc.take_row()));
    }
    Ok(QueryResponse::new(fields, stream::iter(out)))
}

/// The row description of a result set in `format`.
pub(super) fn fields(rs: &ResultSet, format: &Format) -> Arc<Vec<FieldInfo>> {
    Arc::new(
        rs.columns
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| FieldInfo::new(name.clone(), None, None, ty.clone(), format.format_for(i)))
            .collect(),
    )
}

/// A value's text (a blob in hex).
pub(super) fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(t) => t.clone(),
        Value::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

/// A subscription row's value, written as the change log writes it.
pub(super) fn change_value(v: &Value, format: ValueFormat) -> String {
    match (v, format) {
        (Value::Real(f), ValueFormat::Float) => format_f64(*f),
        (Value::Integer(i), ValueFormat::Float) => format_f64(*i as f64),
        (other, _) => text(other),
    }
}

/// A result set of one text column and one row (`SHOW`).
pub(super) fn one_text_row(name: &str, value: String) -> ResultSet {
    ResultSet { columns: vec![(name.to_string(), Type::TEXT)], rows: vec![vec![Value::Text(value)]] }
}

/// Decodes a portal's parameters.
pub(super) fn parameters_of(portal: &Portal<String>) -> Result<Vec<Value>, SqlError> {
    let bad = |i: usize, what: &str| SqlError::new("22P02", format!("parameter ${}: {what}", i + 1));
    let mut out = Vec::with_capacity(portal.parameter_len());
    for i in 0..portal.parameter_len() {
        let ty = portal.statement.parameter_types.get(i).cloned().flatten().unwrap_or(Type::UNKNOWN);
        let Some(raw) = portal.parameters.get(i).cloned().flatten() else {
            out.push(Value::Null);
            continue;
        };
        let v = if portal.parameter_format.is_binary(i) {
            let int = |n: usize| -> Result<i64, SqlError> {
                if raw.len() != n {
                    return Err(bad(i, "a binary integer of the wrong size"));
                }
                Ok(raw.iter().fold(0i64, |acc, &b| (acc << 8) | b as i64) << (64 - 8 * n) >> (64 - 8 * n))
            };
            match ty {
                Type::INT2 => Value::Integer(int(2)?),
                Type::INT4 | Type::OID => Value::Integer(int(4)?),
                Type::INT8 => Value::Integer(int(8)?),
                Type::BOOL => Value::Integer(raw.first().map_or(0, |&b| (b != 0) as i64)),
                Type::FLOAT4 => Value::Real(f32::from_bits(int(4)? as u32) as f64),
                Type::FLOAT8 => Value::Real(f64::from_bits(int(8)? as u64)),
                Type::BYTEA => Value::Blob(raw.to_vec()),
                _ => Value::Text(String::from_utf8(raw.to_vec()).map_err(|_| bad(i, "not UTF-8 text"))?),
            }
        } else {
            let s = std::str::from_utf8(&raw).map_err(|_| bad(i, "not UTF-8 text"))?;
            match ty {
                Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => {
                    Value::Integer(s.trim().parse().map_err(|_| bad(i, &format!("\"{s}\" is not an integer")))?)
                }
                Type::FLOAT4 | Type::FLOAT8 | Type::NUMERIC => match s.trim().parse::<i64>() {
                    Ok(n) => Value::Integer(n),
                    Err(_) => Value::Real(s.trim().parse().map_err(|_| bad(i, &format!("\"{s}\" is not a number")))?),
                },
                Type::BOOL => Value::Integer(matches!(s, "t" | "true" | "1" | "on" | "yes") as i64),
                _ => Value::Text(s.to_string()),
            }
        };
        out.push(v);
    }
    Ok(out)
}
