//! The retired `logins` tree. Stores written before it was retired recorded there which
//! servers held an OAuth login (name, resource URL, when). Nothing read it, and the
//! token vault (`mcpflow_mcp::auth::Vault`, user-only, keyed by the canonical resource
//! URL, naming the server and when it signed in) answers that question by itself — and
//! is always right, where the record was written only by front doors holding a store and
//! went stale with every `mcpflow auth` run without `--store`. Opening a store drops the
//! tree, so no stale record of a login outlives it.

use crate::error::{Error, Result};

/// The name the tree had.
const RETIRED: &str = "logins";

/// Drops the retired tree when it is there.
pub(crate) fn drop_retired(db: &sled::Db) -> Result<()> {
    db.drop_tree(RETIRED).map_err(Error::db("dropping the retired `logins` tree"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[test]
    fn opening_a_store_drops_the_retired_logins_tree() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            db.open_tree("logins").unwrap().insert(b"\x01gh", b"{\"resource\":\"https://h/mcp\"}".to_vec()).unwrap();
            db.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap().store;
        let names: Vec<Vec<u8>> = store.db.tree_names().into_iter().map(|n| n.to_vec()).collect();
        assert!(!names.contains(&b"logins".to_vec()), "the retired tree is still there");
        assert!(names.contains(&b"blueprints".to_vec()), "the store's own trees are there");
    }
}
