// `seedline completion bash|zsh|fish`: prints a shell completion script made from the command specs.
import { type CommandSpec, EXIT_OK } from "../command.js";
import { completionScript, SHELLS, type Shell } from "../completion-scripts.js";

export const completionCommand: CommandSpec = {
  name: "completion",
  summary: "print a shell completion script (bash, zsh, fish)",
  synopsis: "bash|zsh|fish",
  description: `
Prints a completion script for the shell: the commands, their options, and the choices of options
that have them, made from the same specs the CLI parses with, so it never lists what the CLI no
longer takes. Install it once:
  bash: seedline completion bash > ~/.local/share/bash-completion/completions/seedline
        (or add  source <(seedline completion bash)  to ~/.bashrc)
  zsh:  seedline completion zsh > "\${fpath[1]}/_seedline"   (then restart zsh)
  fish: seedline completion fish > ~/.config/fish/completions/seedline.fish`,
  options: {},
  positionals: { name: "SHELL", min: 1, max: 1, choices: SHELLS },
  async run({ args, out, commands }) {
    out.out(completionScript(args.positionals[0] as Shell, commands));
    return EXIT_OK;
  },
};
