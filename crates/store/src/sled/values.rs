//! Saved values, servers, their listings, consents and schedule state in sled: a tree each, keyed by
//! name (`keys.rs`).

use super::Sled;
use crate::backend::Values;
use crate::codec::{decode, encode};
use crate::consents::Consent;
use crate::error::{Error, Result};
use crate::keys::{self, CONSENTS, LISTINGS, SAVED, SCHEDULES, SERVERS};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use sled::Tree;

impl Values for Sled {
    fn saved_values(&self, blueprint: &str) -> Result<Map<String, Value>> {
        self.saved
            .scan_prefix(keys::prefix(blueprint))
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("reading saved values"))?;
                let (_, tail) = keys::parse_pair(SAVED, &key)?;
                Ok((keys::tail_text(SAVED, &key, tail)?, decode(SAVED, &key, &bytes)?))
            })
            .collect()
    }

    fn saved_value(&self, blueprint: &str, name: &str) -> Result<Option<Value>> {
        get(&self.saved, SAVED, &keys::pair(blueprint, name.as_bytes()), "reading a saved value")
    }

    fn save_value(&self, blueprint: &str, name: &str, value: &Value) -> Result<()> {
        self.saved
            .insert(keys::pair(blueprint, name.as_bytes()), encode("the saved value", value)?)
            .map_err(Error::db("saving a value"))?;
        Ok(())
    }

    fn all_saved(&self) -> Result<Vec<(String, String, Value)>> {
        self.saved
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("reading saved values"))?;
                let (blueprint, tail) = keys::parse_pair(SAVED, &key)?;
                Ok((blueprint, keys::tail_text(SAVED, &key, tail)?, decode(SAVED, &key, &bytes)?))
            })
            .collect()
    }

    fn put_server(&self, name: &str, config: &Value) -> Result<()> {
        self.servers
            .insert(keys::single(name), encode("the server config", config)?)
            .map_err(Error::db("saving a server"))?;
        Ok(())
    }

    fn server(&self, name: &str) -> Result<Option<Value>> {
        get(&self.servers, SERVERS, &keys::single(name), "reading a server")
    }

    fn servers(&self) -> Result<Vec<(String, Value)>> {
        named(&self.servers, SERVERS, "listing servers")
    }

    fn delete_server(&self, name: &str) -> Result<bool> {
        let removed = self.servers.remove(keys::single(name)).map_err(Error::db("removing a server"))?;
        Ok(removed.is_some())
    }

    fn put_listing(&self, server: &str, listing: &Value) -> Result<()> {
        self.listings
            .insert(keys::single(server), encode("the server's listing", listing)?)
            .map_err(Error::db("remembering a server's listing"))?;
        Ok(())
    }

    fn listing(&self, server: &str) -> Result<Option<Value>> {
        get(&self.listings, LISTINGS, &keys::single(server), "reading a server's listing")
    }

    fn delete_listing(&self, server: &str) -> Result<bool> {
        let removed = self.listings.remove(keys::single(server)).map_err(Error::db("forgetting a server's listing"))?;
        Ok(removed.is_some())
    }

    fn put_consent(&self, consent: &Consent) -> Result<()> {
        self.consents
            .insert(keys::single(&consent.hash), encode("the consent", consent)?)
            .map_err(Error::db("recording a consent"))?;
        self.db.flush().map_err(Error::db("flushing to disk"))?;
        Ok(())
    }

    fn consent(&self, hash: &str) -> Result<Option<Consent>> {
        get(&self.consents, CONSENTS, &keys::single(hash), "reading consents")
    }

    fn consents(&self) -> Result<Vec<Consent>> {
        self.consents
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("listing consents"))?;
                decode(CONSENTS, &key, &bytes)
            })
            .collect()
    }

    fn revoke(&self, hash: &str) -> Result<bool> {
        let removed = self.consents.remove(keys::single(hash)).map_err(Error::db("revoking a consent"))?;
        self.db.flush().map_err(Error::db("flushing to disk"))?;
        Ok(removed.is_some())
    }

    fn schedule_state(&self, blueprint: &str) -> Result<Option<Value>> {
        get(&self.schedules, SCHEDULES, &keys::single(blueprint), "reading a schedule")
    }

    fn put_schedule_state(&self, blueprint: &str, state: &Value) -> Result<()> {
        self.schedules
            .insert(keys::single(blueprint), encode("the schedule state", state)?)
            .map_err(Error::db("saving a schedule"))?;
        Ok(())
    }

    fn delete_schedule_state(&self, blueprint: &str) -> Result<bool> {
        let removed = self.schedules.remove(keys::single(blueprint)).map_err(Error::db("removing a schedule"))?;
        Ok(removed.is_some())
    }

    fn schedule_states(&self) -> Result<Vec<(String, Value)>> {
        named(&self.schedules, SCHEDULES, "listing schedules")
    }
}

/// The value under `key`, decoded.
fn get<T: DeserializeOwned>(tree: &Tree, name: &'static str, key: &[u8], action: &'static str) -> Result<Option<T>> {
    match tree.get(key).map_err(Error::db(action))? {
        Some(bytes) => decode(name, key, &bytes).map(Some),
        None => Ok(None),
    }
}

/// Every `01 name` entry of a tree with its value, sorted by name.
fn named(tree: &Tree, name: &'static str, action: &'static str) -> Result<Vec<(String, Value)>> {
    tree.iter()
        .map(|entry| {
            let (key, bytes) = entry.map_err(Error::db(action))?;
            Ok((keys::parse_single(name, &key)?, decode(name, &key, &bytes)?))
        })
        .collect()
}
