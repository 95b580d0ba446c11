
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-microservice' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-microservice'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-microservice' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format, as kubectl''s; jsonpath templates (-o jsonpath=''{.items[*].name}'') evaluate over the -o json document')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format, as kubectl''s; jsonpath templates (-o jsonpath=''{.items[*].name}'') evaluate over the -o json document')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector, as kubectl''s (`app=todo,tier!=db`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector, as kubectl''s (`app=todo,tier!=db`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'All namespaces; beats -n, as in kubectl')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'All namespaces; beats -n, as in kubectl')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Do not print table headers')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('operate', 'operate', [CompletionResultType]::ParameterValue, 'Run the controller for Microservice objects (the `accept` handler)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Is Accepted still true for the spec each Microservice has now?')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Every run of a handler, with its cause and outcome, from the operator''s logs')
            [CompletionResult]::new('explain-events', 'explain-events', [CompletionResultType]::ParameterValue, 'Why is there no Warning event on a Microservice?')
            [CompletionResult]::new('collect', 'collect', [CompletionResultType]::ParameterValue, 'Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs)')
            [CompletionResult]::new('manifests', 'manifests', [CompletionResultType]::ParameterValue, 'Print the manifests that install the CRD, RBAC and the operator Deployment')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the client''s version and, from the cluster, its operators'' versions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-microservice;operate' {
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log line format')
            [CompletionResult]::new('--events', '--events', [CompletionResultType]::ParameterName, 'Which events to post')
            [CompletionResult]::new('--max-concurrent', '--max-concurrent', [CompletionResultType]::ParameterName, 'How many objects are handled at once (one object is never handled twice at once)')
            [CompletionResult]::new('--lease-name', '--lease-name', [CompletionResultType]::ParameterName, 'Name of one Lease that governs every watched namespace. Without this and `--lease-namespace`, each watched namespace has its own Lease `microservice-operator` in that namespace (so operators of different namespaces never block each other); with `-A`, one Lease `microservice-operator` in the operator''s own namespace')
            [CompletionResult]::new('--lease-namespace', '--lease-namespace', [CompletionResultType]::ParameterName, 'Namespace of one Lease that governs every watched namespace (its name: `--lease-name`, default `microservice-operator`). Default: see `--lease-name`; with `-A`, the operator''s own namespace (the service account''s in a Pod, else the kubeconfig context''s)')
            [CompletionResult]::new('--health-listen', '--health-listen', [CompletionResultType]::ParameterName, 'Serve /healthz, /readyz and /metrics (Prometheus text) over HTTP on this address, e.g. `0.0.0.0:8080` (port 0 picks a free port; the address is logged)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespaces to watch: repeatable or comma-separated (default: the context''s namespace; in a Pod, the service account''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespaces to watch: repeatable or comma-separated (default: the context''s namespace; in a Pod, the service account''s)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Connect timeout, e.g. `10s` (`0` = no limit); the watches are long-lived, so no request time limit')
            [CompletionResult]::new('--standalone', '--standalone', [CompletionResultType]::ParameterName, 'Run without leader election (one replica only; Kopf''s flag of the same name). By default replicas elect a leader on a coordination.k8s.io/v1 Lease and only the leader handles objects')
            [CompletionResult]::new('--skip-crd-check', '--skip-crd-check', [CompletionResultType]::ParameterName, 'Do not check the CRD at start-up (for an operator that may not read CRDs)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Watch all namespaces (one cluster-wide watch); beats -n, as in kubectl')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Watch all namespaces (one cluster-wide watch); beats -n, as in kubectl')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;status' {
            [CompletionResult]::new('--bundle', '--bundle', [CompletionResultType]::ParameterName, 'Read evidence from a bundle directory instead of a cluster')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'Poll interval of `--watch` (only with it)')
            [CompletionResult]::new('--operator', '--operator', [CompletionResultType]::ParameterName, 'The operator, as NAMESPACE/deployment/NAME (default: discovered)')
            [CompletionResult]::new('--skew', '--skew', [CompletionResultType]::ParameterName, 'Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'The operator''s log, read from FILE beside the Pods'' logs (repeatable)')
            [CompletionResult]::new('--resource', '--resource', [CompletionResultType]::ParameterName, 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace; with --bundle, the whole bundle)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace; with --bundle, the whole bundle)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: a table; with NAME, sentences, and no wide); templates walk the -o json document: {.items[*].name}, not kubectl''s {.items[*].metadata.name}')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: a table; with NAME, sentences, and no wide); templates walk the -o json document: {.items[*].name}, not kubectl''s {.items[*].metadata.name}')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector, as kubectl''s (`app=todo,tier!=db`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector, as kubectl''s (`app=todo,tier!=db`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR')
            [CompletionResult]::new('--exit-code', '--exit-code', [CompletionResultType]::ParameterName, 'Exit 1 when any shown object is stale, never-handled, invalid or terminating; without it `status` exits 0 whatever the verdicts, as `kubectl get` does (docs/contracts.md)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'After the table, print a row whenever an object''s phase, generation or verdict changes')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'After the table, print a row whenever an object''s phase, generation or verdict changes')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'With NAME: print the long form, every evidence line in full, as `-o json` holds it (the default form aggregates repeated events, cuts log lines to their message, fits one screen)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'All namespaces; beats -n, as in kubectl')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'All namespaces; beats -n, as in kubectl')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Do not print the table''s headers')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;logs' {
            [CompletionResult]::new('--handler', '--handler', [CompletionResultType]::ParameterName, 'The handler id; `accept` also matches Kopf''s field handler `accept/spec` (`accept/*`)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'The operator''s log, read from FILE (`-`: stdin; repeatable) beside the cluster''s (or `--bundle`''s) evidence, as `status` and `explain-events` read it: its clock is theirs (the Kopf operator''s `TZ`, checked against the API server), and the answer names the operator and what ran since the spec changed. With `--local`, the files alone. With or without kubelet `--timestamps` prefixes')
            [CompletionResult]::new('--resource', '--resource', [CompletionResultType]::ParameterName, 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names')
            [CompletionResult]::new('--bundle', '--bundle', [CompletionResultType]::ParameterName, 'Read the operator logs of a bundle directory (`operator/logs/POD.CONTAINER[.previous].log`)')
            [CompletionResult]::new('--operator', '--operator', [CompletionResultType]::ParameterName, 'The operator Deployment (default: the one the resolver decides for the object''s namespace, among Deployments running `kopf run`, `python -m kopf` or `kubectl-microservice operate`); with `--bundle`, the bundle''s Deployment whose logs are read')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The operator''s container (default: the one running the operator)')
            [CompletionResult]::new('--container', '--container', [CompletionResultType]::ParameterName, 'The operator''s container (default: the one running the operator)')
            [CompletionResult]::new('--tail', '--tail', [CompletionResultType]::ParameterName, 'Read only the last N lines of each container log, as `kubectl logs --tail` (the kubelet''s `tailLines`; -1: all). For the last N runs, see --last. (`--log-lines` is an old name of this flag.)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only runs started within this long before now (`10m`, `1h`); with `--local`, "now" is the files'' last time (a file has no other clock)')
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'Only the last N runs (after the other filters; not with --follow). For the last lines of each log, see --tail')
            [CompletionResult]::new('--cause', '--cause', [CompletionResultType]::ParameterName, 'Only runs with this cause (repeatable or comma-separated)')
            [CompletionResult]::new('--outcome', '--outcome', [CompletionResultType]::ParameterName, 'Only runs with this outcome (repeatable or comma-separated)')
            [CompletionResult]::new('--run-timeout', '--run-timeout', [CompletionResultType]::ParameterName, 'A run with no outcome after this long is closed with outcome `unknown`')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of OBJECT, and of the operator read (default: the context''s namespace, as every command; with --local or --bundle, a bare NAME matches in any namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of OBJECT, and of the operator read (default: the context''s namespace, as every command; with --local or --bundle, a bare NAME matches in any namespace)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (json: one object per run, one per line; templates over each run''s object); default: runs as text')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (json: one object per run, one per line; templates over each run''s object); default: runs as text')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR')
            [CompletionResult]::new('--local', '--local', [CompletionResultType]::ParameterName, 'Read only the `--log-file` files (`-`: stdin), no cluster and no bundle, as `kubectl set --local` reads no API server: Kopf''s zoneless times are read as UTC, said so, and no operator or spec change is named')
            [CompletionResult]::new('--previous', '--previous', [CompletionResultType]::ParameterName, 'Also read the container before its last restart (live; a bundle''s `.previous.log` files are always read)')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Print the matching runs'' log lines as they are, without grouping')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print every run in full (the default prints runs of one object, handler, outcome and message that repeat as one line with their count, as kubectl aggregates events; `-o json` always holds every run)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Keep following the logs; runs are printed as they end')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Keep following the logs; runs are printed as they end')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;explain-events' {
            [CompletionResult]::new('--bundle', '--bundle', [CompletionResultType]::ParameterName, 'Read evidence from a bundle directory instead of a cluster')
            [CompletionResult]::new('--operator', '--operator', [CompletionResultType]::ParameterName, 'The operator, as NAMESPACE/deployment/NAME (default: discovered)')
            [CompletionResult]::new('--event-ttl', '--event-ttl', [CompletionResultType]::ParameterName, 'The API server''s event TTL (kube-apiserver `--event-ttl`): failures older than this have no events left')
            [CompletionResult]::new('--skew', '--skew', [CompletionResultType]::ParameterName, 'Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'The operator''s log, read from FILE beside the Pods'' logs (repeatable)')
            [CompletionResult]::new('--resource', '--resource', [CompletionResultType]::ParameterName, 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The Microservice''s namespace (default: the context''s namespace; with --bundle, the bundle''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The Microservice''s namespace (default: the context''s namespace; with --bundle, the bundle''s)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: sentences); templates walk the -o json document: {.findings[*].id}')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: sentences); templates walk the -o json document: {.findings[*].id}')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print the long form: every evidence line in full, as `-o json` holds it (the default form aggregates repeated events, cuts log lines to their message and fits one screen)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;collect' {
            [CompletionResult]::new('--operator', '--operator', [CompletionResultType]::ParameterName, 'The operator, as NAMESPACE/deployment/NAME (default: discovered)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'The operator''s log, read from FILE beside the Pods'' logs (repeatable)')
            [CompletionResult]::new('--resource', '--resource', [CompletionResultType]::ParameterName, 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace to collect (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace to collect (default: the context''s namespace)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector, as kubectl''s (`app=todo,tier!=db`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector, as kubectl''s (`app=todo,tier!=db`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Collect all namespaces; beats -n, as in kubectl')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Collect all namespaces; beats -n, as in kubectl')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;manifests' {
            [CompletionResult]::new('--watch-namespace', '--watch-namespace', [CompletionResultType]::ParameterName, 'Namespace the operator watches (repeatable or comma-separated). Give this or `-A`')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'Operator image')
            [CompletionResult]::new('--events', '--events', [CompletionResultType]::ParameterName, '`--events` value written into the operator Deployment''s args')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace the operator runs in (required)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace the operator runs in (required)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: yaml; json: one v1 List)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: yaml; json: one v1 List)')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)')
            [CompletionResult]::new('--standalone', '--standalone', [CompletionResultType]::ParameterName, 'One replica, `Recreate` strategy, `operate --standalone`')
            [CompletionResult]::new('--without-crd', '--without-crd', [CompletionResultType]::ParameterName, 'Leave out the CRD, and only the CRD: to install on a cluster that has it already (another team''s, another operator''s), leaving it as its owners keep it. Without this flag, when the cluster has the CRD with another schema, the CRD printed is the cluster''s with this tool''s added (nothing removed), and stderr says what it adds')
            [CompletionResult]::new('--without-shared', '--without-shared', [CompletionResultType]::ParameterName, 'Leave out what every installation shares: the CRD (deleting it deletes every team''s Microservices) and the ClusterRoles. What is left is this operator''s own objects, for `kubectl delete -f -` to uninstall one team''s operator')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'The operator watches all namespaces (cluster-wide RBAC), instead of --watch-namespace; -n still names the operator''s own namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'The operator watches all namespaces (cluster-wide RBAC), instead of --watch-namespace; -n still names the operator''s own namespace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;completion' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;version' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Where to look for operators when Deployments cannot be listed cluster-wide (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Where to look for operators when Deployments cannot be listed cluster-wide (default: the context''s namespace)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: text)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: text)')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)')
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Print the client''s version only; do not ask the cluster')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-microservice;help' {
            [CompletionResult]::new('operate', 'operate', [CompletionResultType]::ParameterValue, 'Run the controller for Microservice objects (the `accept` handler)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Is Accepted still true for the spec each Microservice has now?')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Every run of a handler, with its cause and outcome, from the operator''s logs')
            [CompletionResult]::new('explain-events', 'explain-events', [CompletionResultType]::ParameterValue, 'Why is there no Warning event on a Microservice?')
            [CompletionResult]::new('collect', 'collect', [CompletionResultType]::ParameterValue, 'Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs)')
            [CompletionResult]::new('manifests', 'manifests', [CompletionResultType]::ParameterValue, 'Print the manifests that install the CRD, RBAC and the operator Deployment')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the client''s version and, from the cluster, its operators'' versions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-microservice;help;operate' {
            break
        }
        'kubectl-microservice;help;status' {
            break
        }
        'kubectl-microservice;help;logs' {
            break
        }
        'kubectl-microservice;help;explain-events' {
            break
        }
        'kubectl-microservice;help;collect' {
            break
        }
        'kubectl-microservice;help;manifests' {
            break
        }
        'kubectl-microservice;help;completion' {
            break
        }
        'kubectl-microservice;help;version' {
            break
        }
        'kubectl-microservice;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
