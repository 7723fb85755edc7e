//! See main.rs. Tests of this family are added by issue #13.

#[allow(unused_imports)]
use super::common::*;
