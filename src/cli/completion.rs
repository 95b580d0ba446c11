//! The flags of `completion`, and its help: the examples and how to install each script.

use clap::{Args, ValueEnum};

/// Flags of `completion`.
#[derive(Debug, Clone, Args)]
#[command(after_help = super::completion::EXAMPLES)]
pub struct CompletionArgs {
    /// The shell, or `kubectl` for the executable that kubectl runs to complete `kubectl microservice`.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

/// What `completion` prints a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// bash, for the bare `kubectl-microservice` binary.
    Bash,
    /// zsh, for the bare binary.
    Zsh,
    /// fish, for the bare binary.
    Fish,
    /// PowerShell, for the bare binary.
    Powershell,
    /// elvish, for the bare binary.
    Elvish,
    /// `kubectl_complete-microservice` (POSIX sh), which kubectl >= 1.26 runs for `kubectl microservice <TAB>`.
    Kubectl,
}

/// The examples of `completion`, shown by `-h` and at the top of `--help`.
macro_rules! examples {
    () => {
        concat!(
            "Examples:\n",
            "  # What kubectl runs to complete `kubectl microservice <TAB>` (see --help)\n",
            "  kubectl microservice completion kubectl >kubectl_complete-microservice\n",
            "\n",
            "  # bash completion for the bare binary\n",
            "  source <(kubectl-microservice completion bash)",
        )
    };
}

/// `completion -h`: the examples.
pub const EXAMPLES: &str = examples!();

/// Long help of `completion`: the examples, then how to install each script. Every command is
/// one line of at most 79 columns, so that clap's wrapping (`wrap_help`, up to the terminal's
/// width) leaves it whole on an 80-column terminal and a pasted line is a whole command (a test
/// holds it).
pub const INSTALL_HELP: &str = concat!(
    examples!(),
    "\n\n",
    r#"Installing:

  kubectl microservice <TAB> (kubectl 1.26 or newer, with kubectl's own
  completion loaded, e.g. `source <(kubectl completion bash)`, which needs the
  bash-completion package): kubectl runs an executable named
  kubectl_complete-microservice found on PATH. krew cannot install it; do it
  once:

    d="${KREW_ROOT:-$HOME/.krew}/bin"
    kubectl microservice completion kubectl >"$d/kubectl_complete-microservice"
    chmod +x "$d/kubectl_complete-microservice"

  It completes subcommands, flags and their values, Microservice names
  (status, logs, explain-events), namespaces (-n) and handler ids (--handler)
  from the cluster of the line's --kubeconfig/--context, within a second, and
  never starts an interactive login.

  The bare binary kubectl-microservice (static: subcommands, flags, fixed
  values; bash needs no bash-completion package for it):

  bash:
    source <(kubectl-microservice completion bash)
  zsh:
    kubectl-microservice completion zsh >"${fpath[1]}/_kubectl-microservice"
  fish:
    set d ~/.config/fish/completions
    kubectl-microservice completion fish >$d/kubectl-microservice.fish
  powershell:
    kubectl-microservice completion powershell | Out-String | Invoke-Expression"#
);

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    /// Each install command stays one line in `completion --help` on an 80-column terminal.
    #[test]
    fn install_commands_are_not_wrapped() {
        let mut cmd = Cli::command().term_width(80);
        let help = cmd
            .find_subcommand_mut("completion")
            .expect("the completion subcommand")
            .render_long_help()
            .to_string();
        let rendered: Vec<&str> = help.lines().map(str::trim_end).collect();
        let commands: Vec<&str> = INSTALL_HELP.lines().filter(|l| l.starts_with("    ")).collect();
        assert_eq!(commands.len(), 8, "{INSTALL_HELP}");
        for line in INSTALL_HELP.lines() {
            assert!(line.len() < 80, "{} columns: {line}", line.len());
        }
        for command in commands {
            assert!(
                rendered.iter().any(|l| l.trim() == command.trim()),
                "`{}` is not one line of:\n{help}",
                command.trim()
            );
        }
    }
}
