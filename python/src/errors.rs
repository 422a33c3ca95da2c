//! The exceptions the native module raises. They are defined in Python
//! (`gresim/_errors.py`), so users see ordinary classes with attributes;
//! each carries the message `sim` prints after `error: `, word for word.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// An instance of `gresim._errors.<class>` built with `kwargs`, as a `PyErr`.
fn raise(py: Python<'_>, class: &str, kwargs: &Bound<'_, PyDict>) -> PyErr {
    let made = py
        .import("gresim._errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call((), Some(kwargs)));
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// `gresim.ScenarioError` for an input error: the file, the JSON path, the
/// line and column when known, and the message.
pub fn input_error(py: Python<'_>, e: &gresim::InputError) -> PyErr {
    let kw = PyDict::new(py);
    let set = || -> PyResult<()> {
        kw.set_item("message", e.to_string())?;
        kw.set_item("file", e.file.display().to_string())?;
        kw.set_item("path", e.path.clone().filter(|p| !p.is_empty() && p != "."))?;
        kw.set_item("line", e.line.map(|l| l.0))?;
        kw.set_item("column", e.line.map(|l| l.1).filter(|&c| c > 0))?;
        kw.set_item("detail", e.msg.clone())?;
        Ok(())
    };
    match set() {
        Ok(()) => raise(py, "ScenarioError", &kw),
        Err(err) => err,
    }
}

/// `gresim._errors.<class>(message, key=value…)` for string fields, as a `PyErr`.
fn raise_with(py: Python<'_>, class: &str, fields: &[(&str, Option<&str>)]) -> PyErr {
    let kw = PyDict::new(py);
    for (k, v) in fields {
        if let Err(e) = kw.set_item(*k, *v) {
            return e;
        }
    }
    raise(py, class, &kw)
}

/// A message that names a file only as text (`file: message`).
pub fn input_message(py: Python<'_>, file: Option<&str>, message: &str) -> PyErr {
    raise_with(
        py,
        "ScenarioError",
        &[("message", Some(message)), ("file", file)],
    )
}

/// A bad argument of a function (an unknown policy name): `ValueError`'s
/// subclass `gresim.UsageError`, with `sim`'s message; `argument` names
/// the argument.
pub fn usage_error(py: Python<'_>, argument: &str, message: &str) -> PyErr {
    raise_with(
        py,
        "UsageError",
        &[("message", Some(message)), ("argument", Some(argument))],
    )
}

/// A run that stopped: `gresim.ScenarioError` when the input is at fault
/// (a bad trace line), `gresim.SimulationError` for a bug.
pub fn run_error(py: Python<'_>, e: &gresim::RunError) -> PyErr {
    if e.is_internal() {
        raise_with(
            py,
            "SimulationError",
            &[("message", Some(&e.source.to_string()))],
        )
    } else {
        input_message(py, Some(&e.path.display().to_string()), &e.to_string())
    }
}

/// Writing outputs failed: `OSError`, with the message `sim` prints.
pub fn write_error(dir: &std::path::Path, e: &std::io::Error) -> PyErr {
    pyo3::exceptions::PyOSError::new_err(format!("cannot write outputs to {}: {e}", dir.display()))
}

/// `gresim.PolicyError`: a Python policy failed.
pub fn policy_error(py: Python<'_>, message: &str) -> PyErr {
    raise_with(py, "PolicyError", &[("message", Some(message))])
}

/// `gresim.PolicyError` with the policy's own traceback as text (the
/// `traceback` attribute, and the end of the message).
pub fn policy_error_with(py: Python<'_>, message: &str, traceback: Option<&str>) -> PyErr {
    match traceback {
        None => policy_error(py, message),
        Some(tb) => raise_with(
            py,
            "PolicyError",
            &[
                ("message", Some(&format!("{message}\n\n{}", tb.trim_end()))),
                ("traceback", Some(tb)),
            ],
        ),
    }
}

/// The traceback of a Python exception, formatted as Python prints it.
pub fn traceback_text(py: Python<'_>, e: &PyErr) -> Option<String> {
    let tb = py.import("traceback").ok()?;
    let lines = tb
        .call_method1(
            "format_exception",
            (e.get_type(py), e.value(py), e.traceback(py)),
        )
        .ok()?;
    let parts: Vec<String> = lines.extract().ok()?;
    Some(parts.concat())
}
