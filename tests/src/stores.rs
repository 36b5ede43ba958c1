//! Fresh stores for the tests that need a real one: a SQLite file under `target/`, a
//! PostgreSQL schema of the test's own (dropped by the test, or by a later run when its process
//! is gone), shared by the agent's store tests and the MCP replica tests.

use std::path::{Path, PathBuf};

use tool_runtime::store::{PostgresOptions, PostgresStore, StoreError};

/// Whether `pid` (as a file or schema name carries it) names a test process that is no longer
/// running: what it left behind is dropped.
fn left_by_a_gone_process(pid: Option<&str>) -> bool {
    let pid = pid.and_then(|pid| pid.parse::<u32>().ok());
    pid.is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
}

/// A path for a new SQLite file under `target_tmpdir` (the test's
/// `env!("CARGO_TARGET_TMPDIR")`, which Cargo sets for test targets only), unique to this process and `name`, with no
/// file (nor its WAL) left there by an earlier run.
pub fn fresh_file(target_tmpdir: &Path, name: &str) -> PathBuf {
    let dir = target_tmpdir.join("stores");
    std::fs::create_dir_all(&dir).unwrap();
    // Files of test processes that are gone (`<name>-<pid>.sqlite*`) are left from earlier runs.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let pid = name.split('.').next().and_then(|stem| stem.rsplit('-').next());
        if left_by_a_gone_process(pid) {
            let _ = std::fs::remove_file(&path);
        }
    }
    let path = dir.join(format!("{name}-{}.sqlite", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// The test database: `TEST_DATABASE_URL`, by default the PostgreSQL every machine of this
/// project runs (127.0.0.1:5432, trust authentication, database `test`).
pub fn database_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A connection for the tests' own statements; a clear failure when no server answers.
pub async fn admin() -> tokio_postgres::Client {
    let url = database_url();
    let (client, connection) =
        tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap_or_else(|error| {
            panic!(
                "PostgreSQL does not answer at {url} ({error}): start it (`service postgresql \
                 start`) or point TEST_DATABASE_URL at a server the tests may make schemas in"
            )
        });
    tokio::spawn(connection);
    client
}

/// A schema of its own for the test `name` in this process (`tr_<pid>_<name>`), none left
/// from before: schemas of test processes that are gone (they stopped before dropping theirs)
/// are dropped first.
pub async fn fresh_schema(name: &str) -> String {
    let client = admin().await;
    let rows = client
        .query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'tr\\_%'", &[])
        .await
        .unwrap();
    for row in rows {
        let schema: String = row.get(0);
        if left_by_a_gone_process(schema.split('_').nth(1))
            || schema == format!("tr_{}_{name}", std::process::id())
        {
            client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await.unwrap();
        }
    }
    format!("tr_{}_{name}", std::process::id())
}

pub async fn drop_schema(schema: &str) {
    admin().await.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).await.unwrap();
}

pub async fn postgres_store(schema: &str) -> Result<PostgresStore, StoreError> {
    let options = PostgresOptions { schema: schema.to_owned(), max_connections: 4 };
    PostgresStore::connect(&database_url(), options).await
}
