//! A gateway target, held to its lockfile entry as the gateway shows it.

use mcppin_core::engine::ApprovedServer;
use mcppin_core::projection::{PrefixMode, Projection, Renaming};

/// One gateway target, mapped to its lockfile entry.
#[derive(Debug)]
pub(crate) struct Target {
    /// The gateway's name of it (`mcp.targets[].name`).
    pub(crate) name: String,
    /// The lockfile id whose approval it is held to.
    pub(crate) id: String,
    /// The approval projected and renamed as the gateway shows it.
    pub(crate) approved: ApprovedServer,
    /// How the gateway renames its items.
    pub(super) renaming: Renaming,
}

/// Why a target cannot be held to its lockfile entry.
#[derive(Debug)]
pub(crate) struct Unprojectable {
    pub(crate) target: String,
    pub(crate) id: String,
    pub(crate) error: mcppin_core::projection::Unprojectable,
}

impl Target {
    /// How notes name it: the target and its entry, escaped.
    pub(super) fn label(&self) -> String {
        format!(
            "target {}, entry {}",
            mcppin_core::escape(&self.name),
            mcppin_core::escape(&self.id)
        )
    }

    /// Target `name`, held to `approved` (the lockfile entry `id`), as a gateway with
    /// `targets` targets in `mode` shows it through `projection`.
    pub(crate) fn new(
        name: String,
        id: String,
        approved: &ApprovedServer,
        projection: &Projection,
        mode: PrefixMode,
        targets: usize,
    ) -> Result<Self, Unprojectable> {
        let renaming = Renaming::new(mode, targets, &name);
        match approved.projected(projection, &renaming) {
            Ok(approved) => Ok(Self {
                name,
                id,
                approved,
                renaming,
            }),
            Err(error) => Err(Unprojectable {
                target: name,
                id,
                error,
            }),
        }
    }
}
