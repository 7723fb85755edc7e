//! Every file in configs/ loads through the public API.
use iopath_model::{Catalog, Topology};

#[test]
fn every_config_loads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            Topology::load(&p, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 5);
}
