// The YAML parser, a chunk of its own (frontmatter.ts loads it when front matter is first
// read).
export { isAlias, isMap, isScalar, parseDocument } from "yaml";
