//! `swan serve --config FILE`: several exports from one server, described in a TOML file.
//!
//! ```toml
//! [[export]]
//! name = "db"                         # what clients ask for: nbds://host/db
//! members = ["m0", "m1", "m2"]        # relative paths are taken from the file's folder
//! allow = ["alice", "db-backup"]      # client-certificate CNs that may open it (no `allow`: all)
//!
//! [[export]]
//! name = "images"
//! members = ["/dev/sdb", "/dev/sdc"]
//! read_only = true
//! ```
//!
//! A file rather than repeated command-line options because what belongs to which export
//! is then written next to its name, one export per section, instead of being paired by the
//! order of flags; and unknown keys (a misspelt `read-only`) are errors, so a typo cannot
//! silently serve an export writable or open to everyone. Every error names the file and the
//! line.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// One export as the file describes it, with its members resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSpec {
    pub name: String,
    /// In the file's order, resolved against the file's folder; `missing` kept as it is.
    pub members: Vec<PathBuf>,
    pub read_only: bool,
    /// Client-certificate common names that may open it; empty: no `allow` in the file, every
    /// client the TLS settings admit (`allow = []` is refused, never read as this).
    pub allow: Vec<String>,
    /// `None`: as the command line says (`--direct`, `--punch-holes`).
    pub direct: Option<bool>,
    pub punch_holes: Option<bool>,
    pub gc_target: Option<u64>,
    /// `file:line` of the export's name, for errors found later (opening the array).
    pub at: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    export: Vec<Spanned<ExportTable>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportTable {
    name: Spanned<String>,
    members: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    read_only: bool,
    /// `None` when the key is absent: an explicit empty list is refused, not taken for that.
    allow: Option<Spanned<Vec<Spanned<String>>>>,
    direct: Option<bool>,
    punch_holes: Option<bool>,
    gc_target: Option<u64>,
}

/// The exports of `path`, checked: at least one; names given, unique and valid NBD export
/// names; members given, none in two exports; allow-lists, where given, naming someone and
/// without blank names.
pub fn load(path: &Path) -> Result<Vec<ExportSpec>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("--config {}: cannot read it", path.display()))?;
    let base = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    parse(&text, &path.display().to_string(), &base)
}

/// [`load`] on `text`, read from `file`, with relative members taken from `base`.
pub fn parse(text: &str, file: &str, base: &Path) -> Result<Vec<ExportSpec>> {
    let at = |span: Range<usize>| format!("{file}:{}", line_of(text, span.start));
    let parsed: File = toml::from_str(text).map_err(|e| match e.span() {
        Some(span) => anyhow::anyhow!("{}: {}", at(span), e.message()),
        None => anyhow::anyhow!("{file}: {}", e.message()),
    })?;
    if parsed.export.is_empty() {
        bail!("{file}: no [[export]] section: name at least one export (its name and members)");
    }
    let mut specs: Vec<ExportSpec> = Vec::new();
    let mut seen_members: Vec<(PathBuf, String)> = Vec::new();
    for table in parsed.export {
        let e = table.into_inner();
        let here = at(e.name.span());
        let name = e.name.into_inner();
        if name.is_empty() {
            bail!("{here}: an empty export name: give each export a name clients can ask for");
        }
        if name.len() > swan_nbd::consts::MAX_STRING_LEN || name.contains('\0') {
            bail!("{here}: export name {name:?} is too long or holds a NUL byte");
        }
        if let Some(first) = specs.iter().find(|s| s.name == name) {
            bail!(
                "{here}: export {name:?} is named twice (first at {}): a client could not say which it means",
                first.at
            );
        }
        let members_at = at(e.members.span());
        let members = e.members.into_inner();
        if members.is_empty() {
            bail!("{members_at}: export {name:?} has no members");
        }
        let mut resolved = Vec::with_capacity(members.len());
        for m in members {
            let m_at = at(m.span());
            let m = m.into_inner();
            if m.is_empty() {
                bail!("{m_at}: an empty member path in export {name:?}");
            }
            let path = if m == swan_server::array::MISSING || Path::new(&m).is_absolute() {
                PathBuf::from(&m)
            } else {
                base.join(&m)
            };
            if m != swan_server::array::MISSING {
                // The same file under two spellings is still the same member.
                let key = path.canonicalize().unwrap_or_else(|_| path.clone());
                if let Some((_, other)) = seen_members.iter().find(|(k, _)| *k == key) {
                    bail!("{m_at}: member {m} is already a member of export {other:?}");
                }
                seen_members.push((key, name.clone()));
            }
            resolved.push(path);
        }
        let mut allow: Vec<Spanned<String>> = Vec::new();
        if let Some(list) = e.allow {
            // Access control fails closed: an empty list must not read as "no list", which
            // would open the export to every client, nor silently close it.
            if list.get_ref().is_empty() {
                bail!(
                    "{}: export {name:?} has `allow = []`, an allow-list naming no one: omit `allow` to serve it to \
                     every client the TLS settings admit, or name the client-certificate common names that may open it",
                    at(list.span())
                );
            }
            allow = list.into_inner();
        }
        let mut names = Vec::with_capacity(allow.len());
        for a in allow {
            let a_at = at(a.span());
            let a = a.into_inner();
            if a.trim().is_empty() {
                bail!("{a_at}: a blank name in the allow-list of export {name:?}");
            }
            names.push(a);
        }
        specs.push(ExportSpec {
            name,
            members: resolved,
            read_only: e.read_only,
            allow: names,
            direct: e.direct,
            punch_holes: e.punch_holes,
            gc_target: e.gc_target,
            at: here,
        });
    }
    Ok(specs)
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Vec<ExportSpec> {
        parse(text, "x.toml", Path::new("/base")).unwrap()
    }

    fn parse_err(text: &str) -> String {
        parse(text, "x.toml", Path::new("/base")).unwrap_err().to_string()
    }

    #[test]
    fn two_exports_with_their_own_flags_and_lists() {
        let s = parse_ok(
            "[[export]]\nname = \"db\"\nmembers = [\"m0\", \"/abs/m1\", \"missing\"]\nallow = [\"alice\"]\n\n\
             [[export]]\nname = \"img\"\nmembers = [\"i0\"]\nread_only = true\ndirect = true\ngc_target = 3\n",
        );
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "db");
        assert_eq!(s[0].members, [PathBuf::from("/base/m0"), "/abs/m1".into(), "missing".into()]);
        assert_eq!((s[0].read_only, s[0].allow.as_slice(), s[0].direct), (false, &["alice".to_string()][..], None));
        assert_eq!(s[0].at, "x.toml:2");
        assert_eq!((s[1].read_only, s[1].direct, s[1].gc_target, s[1].allow.len()), (true, Some(true), Some(3), 0));
        assert_eq!(s[1].at, "x.toml:7");
    }

    #[test]
    fn mistakes_are_refused_naming_file_and_line() {
        let cases = [
            (
                "[[export]]\nname = \"a\"\nmembers = [\"m\"]\nread-only = true\n",
                "x.toml:4",
                "unknown field `read-only`",
            ),
            ("[[export]]\nname = \"a\"\nmembers = [\"m\"]\nread_only = \"yes\"\n", "x.toml:4", "invalid type"),
            ("[[export]]\nname = \"a\"\n", "x.toml:1", "missing field `members`"),
            ("[[export]]\nname = \"a\"\nmembers = []\n", "x.toml:3", "has no members"),
            ("[[export]]\nname = \"\"\nmembers = [\"m\"]\n", "x.toml:2", "empty export name"),
            (
                "[[export]]\nname = \"a\"\nmembers = [\"m\"]\n[[export]]\nname = \"a\"\nmembers = [\"n\"]\n",
                "x.toml:5",
                "named twice (first at x.toml:2)",
            ),
            (
                "[[export]]\nname = \"a\"\nmembers = [\"m\"]\n[[export]]\nname = \"b\"\nmembers = [\"n\",\n \"m\"]\n",
                "x.toml:7",
                "already a member of export \"a\"",
            ),
            ("[[export]]\nname = \"a\"\nmembers = [\"m\"]\nallow = [\" \"]\n", "x.toml:4", "blank name"),
            (
                "[[export]]\nname = \"a\"\nmembers = [\"m\"]\n\nallow = []\n",
                "x.toml:5",
                "`allow = []`, an allow-list naming no one: omit `allow`",
            ),
            ("[[export]]\nname = \"a\"\nmembers = [\"m\"\n", "x.toml:4", "invalid array"),
            ("listen = \"0.0.0.0:1\"\n", "x.toml:1", "unknown field `listen`"),
            ("", "x.toml", "no [[export]] section"),
        ];
        for (text, at, why) in cases {
            let e = parse_err(text);
            assert!(e.starts_with(at) && e.contains(why), "{text:?}: {e}");
        }
    }
}
