//! What an output path asks for (`--out PATH` of `simulate`, `sweep`, `measure`, `compare`,
//! `report`): one file whose format its extension names (`.json`, `.csv`, `.md`, `.svg`,
//! `.png`, `.html`), or a directory (an existing one, or a path ending in `/`) for every
//! file the command writes. A path without an extension keeps each command's older meaning
//! ([`Bare`]): a JSON file for `simulate` and `measure`, a directory for the others.
//!
//! The target is decided from the path alone (and whether a directory is there), before any
//! work starts, so an extension the command cannot write is refused before a run, naming the
//! ones it can. The bytes are then written through [`super::output`], as every output is.

use super::output::{check_output_dir, check_output_file, write_atomic, write_set};
use crate::error::ReportError;
use std::path::{Path, PathBuf};

/// A file format an output path can name by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutFormat {
    /// `.json`: the result as serialized, full precision.
    Json,
    /// `.csv`: a row per point per drive (see [`super::CSV_COLUMNS`]).
    Csv,
    /// `.md` (or `.markdown`): the terminal table as a GitHub table.
    Markdown,
    /// `.svg`: the chart as SVG.
    Svg,
    /// `.png`: the chart as PNG.
    Png,
    /// `.html` (or `.htm`): a self-contained page.
    Html,
}

impl OutFormat {
    /// Every format, in the order their extensions are listed in messages.
    pub const ALL: [OutFormat; 6] =
        [OutFormat::Json, OutFormat::Csv, OutFormat::Markdown, OutFormat::Svg, OutFormat::Png, OutFormat::Html];

    /// The extension a file of this format is written with (no dot).
    pub fn extension(self) -> &'static str {
        match self {
            OutFormat::Json => "json",
            OutFormat::Csv => "csv",
            OutFormat::Markdown => "md",
            OutFormat::Svg => "svg",
            OutFormat::Png => "png",
            OutFormat::Html => "html",
        }
    }

    /// The format an extension (without the dot, any case) names.
    pub fn from_extension(ext: &str) -> Option<OutFormat> {
        match ext.to_ascii_lowercase().as_str() {
            "json" => Some(OutFormat::Json),
            "csv" => Some(OutFormat::Csv),
            "md" | "markdown" => Some(OutFormat::Markdown),
            "svg" => Some(OutFormat::Svg),
            "png" => Some(OutFormat::Png),
            "html" | "htm" => Some(OutFormat::Html),
            _ => None,
        }
    }
}

/// What a path without an extension means to a command: its meaning before formats were
/// chosen by extension, which scripts rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bare {
    /// A directory of all the command's files (`sweep --out results`).
    Dir,
    /// One file of this format (`simulate --out result` writes JSON).
    File(OutFormat),
}

/// Where and how a command writes its results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutTarget {
    /// One file of one format.
    File {
        /// The file.
        path: PathBuf,
        /// Its format.
        format: OutFormat,
    },
    /// A directory holding every file the command writes, swapped in whole.
    Dir(PathBuf),
}

impl OutTarget {
    /// Decides what `path` asks for, given the formats the command writes and what a path
    /// without an extension means to it. Reads metadata only (is a directory there?).
    ///
    /// An existing directory (not a symbolic link to one, which the writers refuse) or a
    /// path ending in `/` is a directory; else a known extension the command writes is one
    /// file of that format; an extension it does not write is [`ReportError::Format`].
    pub fn parse(path: &Path, formats: &[OutFormat], bare: Bare) -> Result<OutTarget, ReportError> {
        let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
        let text = path.as_os_str().to_string_lossy();
        if is_dir || text.ends_with('/') {
            return Ok(OutTarget::Dir(path.to_path_buf()));
        }
        let ext = path.extension().map(|e| e.to_string_lossy().to_string());
        let format = match &ext {
            None => match bare {
                Bare::Dir => return Ok(OutTarget::Dir(path.to_path_buf())),
                Bare::File(f) => f,
            },
            Some(e) => match OutFormat::from_extension(e) {
                Some(f) if formats.contains(&f) => f,
                _ => {
                    return Err(ReportError::Format {
                        path: path.to_path_buf(),
                        extension: e.clone(),
                        known: formats.iter().map(|f| f.extension()).collect(),
                    });
                }
            },
        };
        Ok(OutTarget::File { path: path.to_path_buf(), format })
    }

    /// Whether the output needs a file of `format` (a directory needs all of them).
    pub fn wants(&self, format: OutFormat) -> bool {
        match self {
            OutTarget::File { format: f, .. } => *f == format,
            OutTarget::Dir(_) => true,
        }
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        match self {
            OutTarget::File { path, .. } | OutTarget::Dir(path) => path,
        }
    }

    /// Checks the path before the work that produces it (see [`check_output_file`] and
    /// [`check_output_dir`]; `names` are the files a directory may hold).
    pub fn check(&self, names: &[&str]) -> Result<(), ReportError> {
        match self {
            OutTarget::File { path, .. } => check_output_file(path),
            OutTarget::Dir(dir) => check_output_dir(dir, names),
        }
    }

    /// Writes the output: for a file, the one of `files` (names as in a directory, e.g.
    /// `sweep.csv`) whose extension is its format; for a directory, all of `files` as the
    /// set `names` ([`write_set`]). Returns the paths written.
    ///
    /// A file target whose format is not among `files` (a chart of a sweep where no point
    /// ran) is [`ReportError::NothingToWrite`].
    pub fn write(&self, files: &[(String, Vec<u8>)], names: &[&str]) -> Result<Vec<PathBuf>, ReportError> {
        match self {
            OutTarget::Dir(dir) => write_set(dir, files, names),
            OutTarget::File { path, format } => {
                let ext = format!(".{}", format.extension());
                let (_, bytes) = files
                    .iter()
                    .find(|(n, _)| n.ends_with(&ext))
                    .ok_or_else(|| ReportError::NothingToWrite { path: path.clone(), format: format.extension() })?;
                write_atomic(path, bytes)?;
                Ok(vec![path.clone()])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWEEP: &[OutFormat] = &[OutFormat::Json, OutFormat::Csv, OutFormat::Markdown, OutFormat::Svg, OutFormat::Png];

    #[test]
    fn the_extension_names_the_format() {
        for (name, want) in [
            ("a.json", OutFormat::Json),
            ("a.CSV", OutFormat::Csv),
            ("d/a.md", OutFormat::Markdown),
            ("a.markdown", OutFormat::Markdown),
            ("a.svg", OutFormat::Svg),
            ("a.png", OutFormat::Png),
        ] {
            let t = OutTarget::parse(Path::new(name), SWEEP, Bare::Dir).unwrap();
            assert_eq!(t, OutTarget::File { path: name.into(), format: want }, "{name}");
        }
    }

    #[test]
    fn a_directory_or_a_bare_name_keeps_the_older_meaning() {
        let d = tempfile::tempdir().unwrap();
        // An existing directory, even one named like a file, is a directory.
        let dir = d.path().join("x.json");
        std::fs::create_dir(&dir).unwrap();
        assert_eq!(OutTarget::parse(&dir, SWEEP, Bare::File(OutFormat::Json)).unwrap(), OutTarget::Dir(dir));
        assert_eq!(
            OutTarget::parse(Path::new("new/"), SWEEP, Bare::File(OutFormat::Json)).unwrap(),
            OutTarget::Dir("new/".into())
        );
        assert_eq!(OutTarget::parse(Path::new("results"), SWEEP, Bare::Dir).unwrap(), OutTarget::Dir("results".into()));
        assert_eq!(
            OutTarget::parse(Path::new("result"), SWEEP, Bare::File(OutFormat::Json)).unwrap(),
            OutTarget::File { path: "result".into(), format: OutFormat::Json }
        );
    }

    #[test]
    fn an_extension_the_command_cannot_write_lists_those_it_can() {
        for name in ["a.txt", "a.html"] {
            let e = OutTarget::parse(Path::new(name), SWEEP, Bare::Dir).unwrap_err();
            assert!(e.is_refusal(), "{name}: {e}");
            let m = e.to_string();
            assert!(m.contains(name) && m.contains(".json, .csv, .md, .svg, .png"), "{m}");
        }
    }

    #[test]
    fn a_file_target_writes_only_its_format() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("s.csv");
        let t = OutTarget::parse(&path, SWEEP, Bare::Dir).unwrap();
        assert!(t.wants(OutFormat::Csv) && !t.wants(OutFormat::Json));
        let files = [("sweep.json".to_string(), b"{}".to_vec()), ("sweep.csv".to_string(), b"a,b\n".to_vec())];
        assert_eq!(t.write(&files, &["sweep.json", "sweep.csv"]).unwrap(), vec![path.clone()]);
        assert_eq!(std::fs::read(&path).unwrap(), b"a,b\n");
        let png = OutTarget::parse(&d.path().join("s.png"), SWEEP, Bare::Dir).unwrap();
        assert!(matches!(png.write(&files, &[]), Err(ReportError::NothingToWrite { .. })));
    }
}
