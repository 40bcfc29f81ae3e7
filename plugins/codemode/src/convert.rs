//! JSON ↔ Monty values. Tool arguments and results cross the boundary as
//! JSON text; inside the script they are plain Python values.

use monty_types::{DictPairs, MontyObject};
use serde_json::{Map, Number, Value};

/// A JSON value as the Python value a script sees: objects become dicts,
/// arrays lists, integers ints (floats past `i64`).
pub fn to_python(value: Value) -> MontyObject {
    match value {
        Value::Null => MontyObject::None,
        Value::Bool(b) => MontyObject::Bool(b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => MontyObject::Int(i),
            None => MontyObject::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => MontyObject::String(s),
        Value::Array(items) => MontyObject::List(items.into_iter().map(to_python).collect()),
        Value::Object(map) => MontyObject::Dict(DictPairs::from(
            map.into_iter()
                .map(|(k, v)| (MontyObject::String(k), to_python(v)))
                .collect::<Vec<_>>(),
        )),
    }
}

/// A Python value as JSON: dicts become objects (non-string keys as their
/// text), lists, tuples and sets arrays, a non-finite float `null`, and
/// anything JSON cannot hold (dates, functions, instances) its text.
pub fn to_json(value: &MontyObject) -> Value {
    match value {
        MontyObject::None => Value::Null,
        MontyObject::Bool(b) => Value::Bool(*b),
        MontyObject::Int(i) => Value::from(*i),
        MontyObject::BigInt(i) => {
            let text = i.to_string();
            text.parse::<i128>()
                .ok()
                .and_then(|n| u64::try_from(n).ok().map(Value::from))
                .unwrap_or(Value::String(text))
        }
        MontyObject::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
        MontyObject::String(s) => Value::String(s.clone()),
        MontyObject::List(items)
        | MontyObject::Tuple(items)
        | MontyObject::Set(items)
        | MontyObject::FrozenSet(items) => Value::Array(items.iter().map(to_json).collect()),
        MontyObject::NamedTuple {
            field_names, values, ..
        } => Value::Object(
            field_names
                .iter()
                .zip(values)
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect::<Map<_, _>>(),
        ),
        MontyObject::Dict(pairs) => Value::Object(
            pairs
                .into_iter()
                .map(|(k, v)| {
                    let key = match k {
                        MontyObject::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (key, to_json(v))
                })
                .collect::<Map<_, _>>(),
        ),
        other => Value::String(other.to_string()),
    }
}
