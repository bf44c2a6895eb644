//! Saved values, servers, their listings, consents and schedule state in PostgreSQL: a table each, a
//! JSON value under its name.

use super::{Postgres, col, json_text};
use crate::backend::Values;
use crate::codec::decode;
use crate::consents::Consent;
use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The statements of one table with a JSON value under a one-part name.
struct Table {
    name: &'static str,
    get: &'static str,
    put: &'static str,
    delete: &'static str,
    list: &'static str,
}

const SERVERS: Table = Table {
    name: "servers",
    get: "SELECT config::text FROM servers WHERE name = $1",
    put: "INSERT INTO servers (name, config) VALUES ($1, $2::text::json)
          ON CONFLICT (name) DO UPDATE SET config = EXCLUDED.config",
    delete: "DELETE FROM servers WHERE name = $1",
    list: "SELECT name, config::text FROM servers ORDER BY name",
};

const LISTINGS: Table = Table {
    name: "listings",
    get: "SELECT listing::text FROM listings WHERE name = $1",
    put: "INSERT INTO listings (name, listing) VALUES ($1, $2::text::json)
          ON CONFLICT (name) DO UPDATE SET listing = EXCLUDED.listing",
    delete: "DELETE FROM listings WHERE name = $1",
    list: "SELECT name, listing::text FROM listings ORDER BY name",
};

const CONSENTS: Table = Table {
    name: "consents",
    get: "SELECT consent::text FROM consents WHERE hash = $1",
    put: "INSERT INTO consents (hash, consent) VALUES ($1, $2::text::json)
          ON CONFLICT (hash) DO UPDATE SET consent = EXCLUDED.consent",
    delete: "DELETE FROM consents WHERE hash = $1",
    list: "SELECT hash, consent::text FROM consents ORDER BY hash",
};

const SCHEDULES: Table = Table {
    name: "schedules",
    get: "SELECT state::text FROM schedules WHERE blueprint = $1",
    put: "INSERT INTO schedules (blueprint, state) VALUES ($1, $2::text::json)
          ON CONFLICT (blueprint) DO UPDATE SET state = EXCLUDED.state",
    delete: "DELETE FROM schedules WHERE blueprint = $1",
    list: "SELECT blueprint, state::text FROM schedules ORDER BY blueprint",
};

impl Postgres {
    fn get<T: DeserializeOwned + Send + 'static>(&self, table: &'static Table, key: &str) -> Result<Option<T>> {
        let action = "reading the store";
        let key = key.to_owned();
        self.call(action, move |client| {
            let row = client.query_opt(table.get, &[&key]).map_err(Error::pg(action))?;
            row.map(|row| decode(table.name, key.as_bytes(), col::<String>(&row, 0, action)?.as_bytes())).transpose()
        })
    }

    fn put(&self, table: &'static Table, key: &str, text: String) -> Result<()> {
        let action = "writing to the store";
        let key = key.to_owned();
        self.call(action, move |client| {
            client.execute(table.put, &[&key, &text]).map_err(Error::pg(action))?;
            Ok(())
        })
    }

    fn delete(&self, table: &'static Table, key: &str) -> Result<bool> {
        let action = "removing from the store";
        let key = key.to_owned();
        self.call(action, move |client| Ok(client.execute(table.delete, &[&key]).map_err(Error::pg(action))? > 0))
    }

    fn list<T: DeserializeOwned + Send + 'static>(&self, table: &'static Table) -> Result<Vec<(String, T)>> {
        let action = "listing the store";
        self.call(action, move |client| {
            let rows = client.query(table.list, &[]).map_err(Error::pg(action))?;
            rows.iter()
                .map(|row| {
                    let key: String = col(row, 0, action)?;
                    let value = decode(table.name, key.as_bytes(), col::<String>(row, 1, action)?.as_bytes())?;
                    Ok((key, value))
                })
                .collect()
        })
    }
}

impl Values for Postgres {
    fn saved_values(&self, blueprint: &str) -> Result<Map<String, Value>> {
        let action = "reading saved values";
        let blueprint = blueprint.to_owned();
        self.call(action, move |client| {
            let rows = client
                .query("SELECT name, value::text FROM saved WHERE blueprint = $1 ORDER BY name", &[&blueprint])
                .map_err(Error::pg(action))?;
            rows.iter()
                .map(|row| {
                    let name: String = col(row, 0, action)?;
                    let key = format!("{blueprint}/{name}");
                    let value = decode("saved", key.as_bytes(), col::<String>(row, 1, action)?.as_bytes())?;
                    Ok((name, value))
                })
                .collect()
        })
    }

    fn saved_value(&self, blueprint: &str, name: &str) -> Result<Option<Value>> {
        let action = "reading a saved value";
        let (blueprint, name) = (blueprint.to_owned(), name.to_owned());
        self.call(action, move |client| {
            let row = client
                .query_opt("SELECT value::text FROM saved WHERE blueprint = $1 AND name = $2", &[&blueprint, &name])
                .map_err(Error::pg(action))?;
            let key = format!("{blueprint}/{name}");
            row.map(|row| decode("saved", key.as_bytes(), col::<String>(&row, 0, action)?.as_bytes())).transpose()
        })
    }

    fn save_value(&self, blueprint: &str, name: &str, value: &Value) -> Result<()> {
        let action = "saving a value";
        let text = json_text(|| "the saved value".to_owned(), value)?;
        let (blueprint, name) = (blueprint.to_owned(), name.to_owned());
        self.call(action, move |client| {
            client
                .execute(
                    "INSERT INTO saved (blueprint, name, value) VALUES ($1, $2, $3::text::json)
                     ON CONFLICT (blueprint, name) DO UPDATE SET value = EXCLUDED.value",
                    &[&blueprint, &name, &text],
                )
                .map_err(Error::pg(action))?;
            Ok(())
        })
    }

    fn all_saved(&self) -> Result<Vec<(String, String, Value)>> {
        let action = "reading saved values";
        self.call(action, move |client| {
            let rows = client
                .query("SELECT blueprint, name, value::text FROM saved ORDER BY blueprint, name", &[])
                .map_err(Error::pg(action))?;
            rows.iter()
                .map(|row| {
                    let (blueprint, name): (String, String) = (col(row, 0, action)?, col(row, 1, action)?);
                    let key = format!("{blueprint}/{name}");
                    let value = decode("saved", key.as_bytes(), col::<String>(row, 2, action)?.as_bytes())?;
                    Ok((blueprint, name, value))
                })
                .collect()
        })
    }

    fn put_server(&self, name: &str, config: &Value) -> Result<()> {
        self.put(&SERVERS, name, json_text(|| "the server config".to_owned(), config)?)
    }

    fn server(&self, name: &str) -> Result<Option<Value>> {
        self.get(&SERVERS, name)
    }

    fn servers(&self) -> Result<Vec<(String, Value)>> {
        self.list(&SERVERS)
    }

    fn delete_server(&self, name: &str) -> Result<bool> {
        self.delete(&SERVERS, name)
    }

    fn put_listing(&self, server: &str, listing: &Value) -> Result<()> {
        self.put(&LISTINGS, server, json_text(|| "the server's listing".to_owned(), listing)?)
    }

    fn listing(&self, server: &str) -> Result<Option<Value>> {
        self.get(&LISTINGS, server)
    }

    fn delete_listing(&self, server: &str) -> Result<bool> {
        self.delete(&LISTINGS, server)
    }

    fn put_consent(&self, consent: &Consent) -> Result<()> {
        self.put(&CONSENTS, &consent.hash, json_text(|| "the consent".to_owned(), consent)?)
    }

    fn consent(&self, hash: &str) -> Result<Option<Consent>> {
        self.get(&CONSENTS, hash)
    }

    fn consents(&self) -> Result<Vec<Consent>> {
        Ok(self.list::<Consent>(&CONSENTS)?.into_iter().map(|(_, consent)| consent).collect())
    }

    fn revoke(&self, hash: &str) -> Result<bool> {
        self.delete(&CONSENTS, hash)
    }

    fn schedule_state(&self, blueprint: &str) -> Result<Option<Value>> {
        self.get(&SCHEDULES, blueprint)
    }

    fn put_schedule_state(&self, blueprint: &str, state: &Value) -> Result<()> {
        self.put(&SCHEDULES, blueprint, json_text(|| "the schedule state".to_owned(), state)?)
    }

    fn delete_schedule_state(&self, blueprint: &str) -> Result<bool> {
        self.delete(&SCHEDULES, blueprint)
    }

    fn schedule_states(&self) -> Result<Vec<(String, Value)>> {
        self.list(&SCHEDULES)
    }
}
