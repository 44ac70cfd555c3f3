use super::*;

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

fn eval(expr: &str, var: &str, value: &str) -> Result<String, String> {
    evaluate(expr, var, &q(value)).map(|v| match v {
        Value::Number(n) => format!("#{}", go_format_g(n)),
        Value::Quantity(q) => q.to_go_string(),
    })
}

#[test]
fn openkruise_expressions() {
    for (expr, var, value, want) in [
        ("cpu*50%", "cpu", "200m", "100m"),
        ("memory*30%", "memory", "600Mi", "180Mi"),
        ("max(cpu*50%, 100m)", "cpu", "150m", "100m"),
        ("max(cpu*50%, 100m)", "cpu", "400m", "200m"),
        ("cpu + 50m", "cpu", "100m", "150m"),
        ("max(memory*20% + 100Mi, 200Mi)", "memory", "800Mi", "260Mi"),
        ("500m", "cpu", "100m", "500m"),
        ("1Gi", "memory", "500Mi", "1Gi"),
        ("cpu*50%", "cpu", "0", "0"),
        ("memory*25%", "memory", "400Mi", "100Mi"),
        ("1", "cpu", "2", "#1"),
        // README examples.
        ("2 + 3 * 4", "cpu", "0", "#14"),
        ("50% * 200", "cpu", "0", "#100"),
        ("max(10, 20)", "cpu", "0", "#20"),
        ("100m + 50m", "cpu", "0", "150m"),
        ("40m * 2", "cpu", "0", "80m"),
        ("max(40m, 20)", "cpu", "0", "20"),
        ("max(cpu*50%, 50m)", "cpu", "200m", "100m"),
        ("max(memory*50%, 100Mi)", "memory", "512Mi", "256Mi"),
    ] {
        assert_eq!(
            eval(expr, var, value).as_deref(),
            Ok(want),
            "{expr} with {var}={value}"
        );
    }
}

/// The cases of OpenKruise's calculator tests (numbers print as Go's `%g`).
#[test]
fn openkruise_calculator_cases() {
    for (expr, var, value, want) in [
        ("cpu", "cpu", "100m", "100m"),
        ("cpu * 2", "cpu", "50m", "100m"),
        ("max(cpu, 200m)", "cpu", "100m", "200m"),
        (
            "min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)",
            "cpu",
            "0.5",
            "500m",
        ),
        ("max(0.25, cpu)", "cpu", "100m", "250m"),
        ("max(cpu, 0.75)", "cpu", "500m", "750m"),
        ("min(0.8, cpu)", "cpu", "1.0", "800m"),
        ("min(cpu, 1.5)", "cpu", "2.0", "1500m"),
        ("max(min(2*cpu,-cpu+3.0),2*cpu-3.0)", "cpu", "1.5", "1500m"),
        ("max(min(2*cpu,3.0-cpu),2*cpu-3.0)", "cpu", "1.5", "1500m"),
        ("memory + 100Mi", "memory", "200Mi", "300Mi"),
        ("0.5 * memory + max(0, memory-2Gi)", "memory", "8Gi", "10Gi"),
        ("2 + 3", "cpu", "0", "#5"),
        ("15 / 3", "cpu", "0", "#5"),
        ("50%", "cpu", "0", "#0.5"),
        ("100% * 2", "cpu", "0", "#2"),
        ("100.5%", "cpu", "0", "#1.005"),
        (
            "min(max(max(max(0.5,0.5*0.5),0.5-1.0),0.5-1.0),3.0)",
            "cpu",
            "0",
            "#0.5",
        ),
        (
            "min(max(max(max(500m,0.5*0.5),0.5-1.0),0.5-1.0),3.0)",
            "cpu",
            "0",
            "500m",
        ),
        ("40m + 20m", "cpu", "0", "60m"),
        ("100Mi - 50Mi", "cpu", "0", "50Mi"),
        ("2 * 40m", "cpu", "0", "80m"),
        ("100m / 2", "cpu", "0", "50m"),
        ("min(40m, 20m)", "cpu", "0", "20m"),
        ("10+-5", "cpu", "0", "#5"),
        ("10--5", "cpu", "0", "#15"),
        ("20+-10+5", "cpu", "0", "#15"),
        ("1e-3", "cpu", "0", "#0.001"),
        ("2.5E+1", "cpu", "0", "#25"),
        ("1e3+-200", "cpu", "0", "#800"),
        ("1k", "cpu", "0", "1k"),
        ("100M", "cpu", "0", "100M"),
        ("1Pi", "cpu", "0", "1Pi"),
        ("0m + 0m", "cpu", "0", "0"),
        ("1000Gi + 500Gi", "cpu", "0", "1500Gi"),
        ("1.5Gi * 2", "cpu", "0", "3Gi"),
        ("1Gi + 100Mi", "cpu", "0", "1124Mi"),
        ("max(100m, 100m)", "cpu", "0", "100m"),
        ("(100m + 50m) * 2 - 50m", "cpu", "0", "250m"),
        ("max(100m * 50%, 30m)", "cpu", "0", "50m"),
        ("max(10 + 5, 20 - 5) * 2", "cpu", "0", "#30"),
        ("max(100m, min(200m, 150m)) + 50m", "cpu", "0", "200m"),
        ("1e", "cpu", "0", "#0"),
        ("1e+", "cpu", "0", "#0"),
        ("max(1e3, 100m)", "cpu", "0", "1k"),
        (".5 + .5", "cpu", "0", "#1"),
        (".5Mi", "cpu", "0", "512Ki"),
        ("2\n+\n3", "cpu", "0", "#5"),
    ] {
        assert_eq!(
            eval(expr, var, value).as_deref(),
            Ok(want),
            "{expr} with {var}={value}"
        );
    }
    for expr in [
        "5..5",
        "5%%",
        "10 / 0",
        "unknown(1, 2)",
        "40m * 2m",
        "2 / 40m",
        "-10",
        "-100m",
        "10 - 20",
        "50m - 100m",
        "",
        "   ",
        "2 + @",
        "(2 + 3",
        "()",
        "max()",
        "max(10)",
        "max(10, 20, 30)",
        "max(10, 20 / 0)",
        "max(10, unknown(20, 30))",
        "1e3e2",
        "1eKi",
        "undefined_var",
    ] {
        assert!(eval(expr, "cpu", "50m").is_err(), "{expr}");
    }
}

#[test]
fn operators_and_precedence() {
    for (expr, want) in [
        ("-2 * -3", "#6"),
        ("10 - 2 - 3", "#5"),
        ("12 / 2 / 3", "#2"),
        ("(1 + 2) * 3", "#9"),
        ("- (1 - 3)", "#2"),
        ("MAX(1, 2)", "#2"),
        ("min(3, 2.5)", "#2.5"),
        ("min(1, 1500m)", "1"),
        ("min(2, 1500m)", "1500m"),
        ("1.5e3", "#1500"),
        ("1e999", "#+Inf"),
        ("1e999%", "#0"),
        ("100Mib", "#0"),
        ("5%3", "#0"),
        ("1 + 1m", "1001m"),
        ("1Mi - 1Mi", "0"),
        ("1Gi / 3", "357913941333m"),
        ("3 * 1Ki", "3Ki"),
        ("CPU + 0", "500m"),
        ("cpu\u{0}garbage", "500m"),
        ("\tcpu\n", "500m"),
        ("max(1m, 08m)", "08m"),
    ] {
        assert_eq!(eval(expr, "cpu", "500m").as_deref(), Ok(want), "{expr}");
    }
}

#[test]
fn errors() {
    for (expr, want) in [
        ("cpu * invalid", "undefined variable: invalid"),
        ("foo * Bar", "undefined variable: bar"),
        ("cpu * cpu", "multiplication of two quantities"),
        ("cpu / cpu", "division by quantity"),
        ("cpu / 0", "division by zero"),
        ("1 / 0", "division by zero"),
        ("max(1)", "max function requires exactly 2 arguments, got 1"),
        ("Avg(1, 2)", "unknown function: Avg"),
        ("max(x)", "max function requires exactly 2 arguments, got 1"),
        ("cpu - 1", "calculation result is negative: -500m"),
        ("0 - 1", "calculation result is negative: -1"),
        ("0 - 0.00001", "calculation result is negative: -1e-05"),
        ("0 - 1234567", "calculation result is negative: -1.234567e+06"),
        ("-08m", "calculation result is negative: -8m"),
        ("max(-08m, -9m)", "calculation result is negative: -8m"),
        (
            "1e5m",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ("10P * 2", "kruise-rs: quantity out of the supported range"),
        (
            "1P * 1000000",
            "calculation result is negative: -9223372036854775808m",
        ),
        ("cpu +", "parse error: syntax error at line 1, col 6"),
        ("cpu )", "parse error: syntax error at line 1, col 6"),
        ("max(1, 2, 3)", "parse error: syntax error at line 1, col 10"),
        ("(1 + 2", "parse error: syntax error at line 1, col 7"),
        ("1 +\n  * 2", "parse error: syntax error at line 2, col 4"),
        ("1Ei", "parse error: syntax error at line 1, col 4"),
        ("cpu_x", "undefined variable: cpu_x"),
        ("_cpu", "parse error: syntax error at line 1, col 2"),
        ("cpu 50%", "parse error: syntax error at line 1, col 8"),
        ("", "parse error: syntax error at line 1, col 1"),
        // The semantic error met before the syntax error wins.
        ("nope +", "undefined variable: nope"),
        ("caf\u{e9}", "undefined variable: caf\u{fffd}"),
        // U+00A0 is the bytes C2 A0: a letter, then a space.
        ("\u{a0}cpu", "undefined variable: \u{fffd}"),
    ] {
        assert_eq!(eval(expr, "cpu", "500m"), Err(want.to_string()), "{expr}");
    }
}

#[test]
fn go_g_format() {
    for (f, want) in [
        (1.0, "1"),
        (-0.5, "-0.5"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (123456.7, "123456.7"),
        (0.0001, "0.0001"),
        (0.00001234, "1.234e-05"),
        (1e21, "1e+21"),
        (f64::NEG_INFINITY, "-Inf"),
    ] {
        assert_eq!(go_format_g(f), want, "{f}");
    }
}
