//! `iopath schema`: the JSON Schema of topology files, for editors.
use super::{CliResult, print_json};

pub fn run() -> CliResult {
    let schema = schemars::schema_for!(iopath_model::topology::RawTopology);
    print_json(&schema)?;
    Ok(0)
}
