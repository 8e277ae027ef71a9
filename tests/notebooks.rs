//! The Jupyter notebooks (notebooks/*.ipynb) execute headless, end to end: each runs the CLI
//! (this build's `causim`, passed as `CARGO_BIN_EXE_causim`), loads the CSV results with pandas
//! and draws its figures. Needs the Python packages in requirements.txt (scripts/test.sh
//! installs them).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Jupyter picks a kernel's ports as free ones and binds them later, so kernels started at once
/// can pick the same port ("ZMQError: Address already in use"): the notebooks run one at a time.
static ONE_KERNEL_AT_A_TIME: Mutex<()> = Mutex::new(());

fn execute(name: &str, min_figures: usize) {
    let _one = ONE_KERNEL_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let notebook = root.join("notebooks").join(format!("{name}.ipynb"));
    let tmp: PathBuf = std::env::temp_dir().join(format!("causim-notebook-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let started = std::time::Instant::now();
    let out = Command::new("python3")
        .args(["-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=600", "--output-dir"])
        .arg(tmp.join("executed"))
        .arg(&notebook)
        .env("CARGO_BIN_EXE_causim", env!("CARGO_BIN_EXE_causim"))
        .env("CAUSIM_NOTEBOOK_OUT", tmp.join("out"))
        .env("CAUSIM_THREADS", "2")
        .env("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("cannot start python3 (install requirements.txt: scripts/test.sh does): {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}.ipynb failed to execute (pip install -r requirements.txt?):\n{stderr}");
    eprintln!("{name}.ipynb executed in {:.1} s", started.elapsed().as_secs_f64());
    // The executed notebook: every code cell ran, none raised, and the figures are there.
    let text = std::fs::read_to_string(tmp.join("executed").join(format!("{name}.ipynb"))).unwrap();
    let nb: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cells = nb["cells"].as_array().unwrap();
    let mut figures = 0;
    let mut tables = 0;
    for cell in cells.iter().filter(|c| c["cell_type"] == "code") {
        assert!(cell["execution_count"].is_number(), "{name}: a cell did not run: {}", cell["source"]);
        for o in cell["outputs"].as_array().unwrap() {
            assert_ne!(o["output_type"], "error", "{name}: {}", o["evalue"]);
            if o["data"].get("image/png").is_some() {
                figures += 1;
            }
            if o["data"].get("text/html").is_some_and(|h| h.to_string().contains("<table")) {
                tables += 1;
            }
        }
    }
    assert!(figures >= min_figures, "{name}: {figures} figures, expected at least {min_figures}");
    assert!(tables >= 3, "{name}: {tables} tables (claims beside the paper's numbers), expected at least 3");
    // The notebook ran the CLI: reproduce's report and the quick sweeps' CSVs are in its output.
    let report = std::fs::read_to_string(tmp.join("out").join("report.md")).unwrap();
    assert!(report.contains("| claim | kind | paper | simulated | pass rule | holds |"), "{report}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Goal: the CausalMesh notebook runs its quick sweeps and shows Figs. 1, 17, 13 and the
/// mutants' delay sweep with the paper's numbers (HydroCache and FaaSTCC among the series).
#[test]
fn the_causalmesh_notebook_executes() {
    execute("causalmesh", 4);
}

/// Goal: the FaaSTCC notebook runs the Zipf sweep and shows Figs. 4a, 5 and 6 (FaaSTCC beside
/// HydroCache static and dynamic) and replays the mutants.
#[test]
fn the_faastcc_notebook_executes() {
    execute("faastcc", 3);
}

/// Goal: committed notebooks carry no outputs (they are produced by running them).
#[test]
fn committed_notebooks_have_no_outputs() {
    for name in ["causalmesh", "faastcc"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("notebooks").join(format!("{name}.ipynb"));
        let nb: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for cell in nb["cells"].as_array().unwrap().iter().filter(|c| c["cell_type"] == "code") {
            assert!(cell["outputs"].as_array().unwrap().is_empty(), "{}: outputs committed", path.display());
        }
    }
}
