//! JSON Schemas for `inputSchema` and `outputSchema`, made from the same `utoipa`
//! descriptions the OpenAPI document uses — one description per type, so a tool's schema
//! cannot drift from the HTTP route's.
//!
//! OpenAPI 3.1 schemas are JSON Schema with a few OpenAPI-only habits, which MCP clients
//! validate against with plain JSON Schema validators (the TypeScript SDK uses Ajv). So
//! each schema is made self-contained: referenced types go under `$defs` and references
//! point there, and OpenAPI-only words (`example`, number `format`s such as `int64`)
//! are dropped.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Map, Value};
use utoipa::ToSchema;

const OPENAPI_REFS: &str = "#/components/schemas/";

/// `T`'s schema with every type it refers to under `$defs`.
pub(super) fn of<T: ToSchema>() -> Arc<JsonObject> {
    let mut deps = Vec::new();
    T::schemas(&mut deps);
    build::<T>(deps)
}

/// The schema of a generic `T` over `I` (a list of `I`): utoipa leaves the type
/// parameter itself out of the generic's dependencies, so `I` is added.
pub(super) fn of_generic<T: ToSchema, I: ToSchema>() -> Arc<JsonObject> {
    let mut deps = vec![(I::name().into_owned(), I::schema())];
    I::schemas(&mut deps);
    T::schemas(&mut deps);
    build::<T>(deps)
}

fn build<T: ToSchema>(deps: Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) -> Arc<JsonObject> {
    let mut root = serde_json::to_value(T::schema()).unwrap_or_default();
    clean(&mut root);
    let Value::Object(mut root) = root else { return Arc::new(JsonObject::new()) };
    let mut defs = Map::new();
    for (name, schema) in deps {
        let mut schema = serde_json::to_value(schema).unwrap_or_default();
        clean(&mut schema);
        defs.insert(name, schema);
    }
    // A recursive type (the page tree) refers to itself, and utoipa leaves it out of its
    // own dependencies.
    let own = format!("\"#/$defs/{}\"", T::name());
    if !defs.contains_key(T::name().as_ref()) && Value::Object(root.clone()).to_string().contains(&own) {
        defs.insert(T::name().into_owned(), Value::Object(root.clone()));
    }
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    Arc::new(root)
}

/// Rewrites references to `$defs` and drops what JSON Schema does not know.
fn clean(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix(OPENAPI_REFS)
            {
                *r = format!("#/$defs/{name}");
            }
            map.remove("example");
            let openapi_format = matches!(
                map.get("format").and_then(Value::as_str),
                Some(
                    "int8"
                        | "int16"
                        | "int32"
                        | "int64"
                        | "uint8"
                        | "uint16"
                        | "uint32"
                        | "uint64"
                        | "float"
                        | "double"
                )
            );
            if openapi_format {
                map.remove("format");
            }
            for child in map.values_mut() {
                clean(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clean),
        _ => {}
    }
}

/// Every `$ref` in `schema` that does not resolve inside it (for tests).
#[cfg(test)]
pub(super) fn dangling_refs(schema: &JsonObject) -> Vec<String> {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|c| refs(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| refs(c, out)),
            _ => {}
        }
    }
    let value = Value::Object(schema.clone());
    let mut found = Vec::new();
    refs(&value, &mut found);
    found
        .into_iter()
        .filter(|r| r.strip_prefix("#/$defs/").is_none_or(|name| value["$defs"].get(name).is_none()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pages::{Page, TreeNode};

    #[test]
    fn schemas_are_self_contained_objects() {
        for schema in [of::<Page>(), of::<TreeNode>()] {
            assert_eq!(schema["type"], "object", "{schema:?}");
            assert!(dangling_refs(&schema).is_empty(), "{schema:?}");
            let text = Value::Object((*schema).clone()).to_string();
            assert!(!text.contains("int64") && !text.contains("components"), "{text}");
        }
    }
}
