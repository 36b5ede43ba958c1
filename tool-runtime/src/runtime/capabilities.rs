use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

pub use crate::spec::{Capability, CapabilityRef};

/// The capabilities handed to one tool call.
///
/// Only the runner makes them: there is no public constructor, so no code outside the runner
/// can call a tool's [`run`](super::Tool::run) or a bound tool's
/// [`exec`](super::BoundToolRuntime::exec) (a wrapper tool may hand on the ones it was given).
/// The application binds capabilities on its catalog
/// ([`ToolCatalogBuilder::capability`](crate::catalog::ToolCatalogBuilder::capability)); a
/// test runs a tool with [`testing`](crate::testing).
///
/// `Debug` lists capability names only, never their contents.
#[derive(Clone)]
pub struct ToolCapabilities {
    entries: HashMap<TypeId, (&'static str, Arc<dyn Any + Send + Sync>)>,
}

impl ToolCapabilities {
    /// No capabilities (the runner's, and the catalog builder's).
    #[cfg_attr(not(feature = "runner"), allow(dead_code))]
    pub(crate) fn new() -> Self {
        Self { entries: HashMap::new() }
    }

    /// Adds a capability, replacing one of the same type.
    #[must_use]
    pub fn with<C: Capability>(self, capability: C) -> Self {
        self.with_shared(Arc::new(capability))
    }

    /// Adds a shared capability, replacing one of the same type.
    #[must_use]
    pub fn with_shared<C: Capability>(mut self, capability: Arc<C>) -> Self {
        self.entries.insert(TypeId::of::<C>(), (C::NAME, capability));
        self
    }

    /// The capability `C`.
    ///
    /// # Errors
    ///
    /// [`MissingCapability`] when `C` was not handed to this call (not declared by the tool,
    /// or not bound by the application). It converts into a [`ToolError`](super::ToolError) with `?`.
    pub fn get<C: Capability>(&self) -> Result<&C, MissingCapability> {
        self.entries
            .get(&TypeId::of::<C>())
            .and_then(|(_, capability)| capability.downcast_ref::<C>())
            .ok_or(MissingCapability { name: C::NAME })
    }

    /// Whether `C` is present.
    #[must_use]
    pub fn contains<C: Capability>(&self) -> bool {
        self.entries.contains_key(&TypeId::of::<C>())
    }

    /// Whether a capability of this type is present.
    #[must_use]
    pub fn contains_id(&self, id: TypeId) -> bool {
        self.entries.contains_key(&id)
    }

    /// Only the capabilities in `declared` (least privilege: what a tool is handed).
    #[must_use]
    pub fn restricted_to(&self, declared: &[CapabilityRef]) -> Self {
        let entries = declared
            .iter()
            .filter_map(|capability| {
                let id = capability.type_id();
                self.entries.get(&id).map(|entry| (id, entry.clone()))
            })
            .collect();
        Self { entries }
    }

    /// The names of the capabilities present, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.entries.values().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names
    }
}

impl fmt::Debug for ToolCapabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

/// A tool asked for a capability it was not handed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingCapability {
    name: &'static str,
}

impl MissingCapability {
    /// The capability's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl fmt::Display for MissingCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "capability `{}` is not available to this tool", self.name)
    }
}

impl std::error::Error for MissingCapability {}

#[cfg(test)]
mod tests {
    use super::{Capability, ToolCapabilities};

    /// A capability holding a secret.
    struct Vault(&'static str);

    impl Capability for Vault {
        const NAME: &'static str = "vault";
    }

    #[test]
    fn debug_shows_names_never_contents() {
        let caps = ToolCapabilities::new().with(Vault("s3cr3t"));
        assert_eq!(format!("{caps:?}"), r#"{"vault"}"#);
        assert_eq!(caps.get::<Vault>().map(|vault| vault.0), Ok("s3cr3t"));
    }
}
