//! The judgement layer (docs/design.md, "Layers inside `mcppin-core`"): what changed in an
//! item ([`diff`]), the text policies ([`scan`]), every policy and the verdict of `verify`
//! ([`policy`]), the renderings of that verdict ([`report`]) and the `lock` command that
//! approves what a failing run showed ([`remedy`]). It decides rather than reads: `verify`
//! never fails, it returns findings.
//!
//! Each module is also named from the crate root (`mcppin_core::policy::verify`).

pub mod diff;
pub mod policy;
pub mod remedy;
pub mod report;
pub mod scan;
