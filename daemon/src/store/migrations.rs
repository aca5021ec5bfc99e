//! The schema, as one SQL file per version and back-end under
//! `migrations/{sqlite,postgres}/NNNN_name.sql`, compiled in. The runner
//! (`migrate`, stamped out per back-end in `sql.rs`) applies the versions
//! above the one recorded in `schema_version`, each in its own transaction,
//! so a store made by an earlier build opens with its data as it was.
//! Not sqlx's `migrate!`: it keeps its own table, and would re-run version 1
//! on every store made before this file existed.
//!
//! A file's statements are split on `;`: keep semicolons out of comments.

/// One schema version for both back-ends. Index + 1 is the version.
#[derive(Debug)]
pub struct Migration {
    pub name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

macro_rules! migration {
    ($name:literal) => {
        Migration {
            name: $name,
            sqlite: include_str!(concat!("migrations/sqlite/", $name, ".sql")),
            postgres: include_str!(concat!("migrations/postgres/", $name, ".sql")),
        }
    };
}

pub const MIGRATIONS: &[Migration] = &[migration!("0001_initial"), migration!("0002_leader")];

/// The statements of one migration's SQL, in order.
pub fn statements(sql: &str) -> impl Iterator<Item = &str> {
    sql.split(';').map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file in a back-end's directory, by name.
    fn files(backend: &str) -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/migrations").join(backend);
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn every_file_is_listed_once_in_order_for_both_back_ends() {
        let listed: Vec<String> = MIGRATIONS.iter().map(|m| format!("{}.sql", m.name)).collect();
        assert_eq!(files("sqlite"), listed, "list each file of migrations/sqlite in MIGRATIONS");
        assert_eq!(files("postgres"), listed, "every migration has a file for both back-ends");
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert!(m.name.starts_with(&format!("{:04}_", i + 1)), "{} is migration {}", m.name, i + 1);
        }
    }

    #[test]
    fn version_one_is_the_schema_the_first_builds_made() {
        let m = &MIGRATIONS[0];
        let sqlite: Vec<&str> = statements(m.sqlite).collect();
        assert_eq!(sqlite.len(), 3, "{sqlite:?}");
        assert!(sqlite[0].ends_with("CREATE TABLE entities (kind TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (kind, name))"));
        assert!(sqlite[1].starts_with("CREATE TABLE txn (id INTEGER PRIMARY KEY AUTOINCREMENT,"));
        assert!(
            statements(m.postgres).nth(1).unwrap().starts_with("CREATE TABLE txn (id BIGSERIAL PRIMARY KEY,")
        );
    }
}
