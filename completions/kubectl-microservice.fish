# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_microservice_global_optspecs
    string join \n kubeconfig= context= n/namespace= A/all-namespaces o/output= allow-missing-template-keys= l/selector= no-headers as= as-group= request-timeout= color= h/help V/version
end

function __fish_kubectl_microservice_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_microservice_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_microservice_using_subcommand
    set -l cmd (__fish_kubectl_microservice_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -s n -l namespace -d 'The namespace (default: the context\'s namespace)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -s o -l output -d 'Output format, as kubectl\'s; jsonpath templates (-o jsonpath=\'{.items[*].name}\') evaluate over the -o json document' -r -f -a "json\t'JSON documents'
yaml\t'YAML documents'
wide\t'A wider table'
name\t'RESOURCE.GROUP/NAME per object'
jsonpath=\t'kubectl\'s JSONPath template, e.g. jsonpath=\'{.items[*].name}\''
jsonpath-as-json=\t'The template\'s values as JSON arrays'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l allow-missing-template-keys -d 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl\'s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl\'s `.items[*].metadata.name` finds no `metadata` there)' -r -f -a "true\t''
false\t''"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -s l -l selector -d 'Label selector, as kubectl\'s (`app=todo,tier!=db`)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l request-timeout -d 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l color -d 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR' -r -f -a "auto\t'Colour a terminal unless NO_COLOR is set and non-empty'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -s A -l all-namespaces -d 'All namespaces; beats -n, as in kubectl'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -l no-headers -d 'Do not print table headers'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "operate" -d 'Run the controller for Microservice objects (the `accept` handler)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "status" -d 'Is Accepted still true for the spec each Microservice has now?'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "logs" -d 'Every run of a handler, with its cause and outcome, from the operator\'s logs'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "explain-events" -d 'Why is there no Warning event on a Microservice?'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "collect" -d 'Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "manifests" -d 'Print the manifests that install the CRD, RBAC and the operator Deployment'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "version" -d 'Print the client\'s version and, from the cluster, its operators\' versions'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l log-format -d 'Log line format' -r -f -a "text\t'`<RFC3339 time> <LEVEL> [ns/name] <message> handler=<id> cause=<cause>`'
json\t'One JSON object per line: `{"timestamp","level","message","object":{...},"handler","cause"}`'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l events -d 'Which events to post' -r -f -a "all\t'Normal `Accepted` and every Warning'
warnings\t'Warnings only (`ReconcileFailed`, `InvalidSpec`, `StatusPruned`)'
none\t'Post nothing; outcomes are only in the logs and in `status`'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l max-concurrent -d 'How many objects are handled at once (one object is never handled twice at once)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l lease-name -d 'Name of one Lease that governs every watched namespace. Without this and `--lease-namespace`, each watched namespace has its own Lease `microservice-operator` in that namespace (so operators of different namespaces never block each other); with `-A`, one Lease `microservice-operator` in the operator\'s own namespace' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l lease-namespace -d 'Namespace of one Lease that governs every watched namespace (its name: `--lease-name`, default `microservice-operator`). Default: see `--lease-name`; with `-A`, the operator\'s own namespace (the service account\'s in a Pod, else the kubeconfig context\'s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l health-listen -d 'Serve /healthz, /readyz and /metrics (Prometheus text) over HTTP on this address, e.g. `0.0.0.0:8080` (port 0 picks a free port; the address is logged)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -s n -l namespace -d 'Namespaces to watch: repeatable or comma-separated (default: the context\'s namespace; in a Pod, the service account\'s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l request-timeout -d 'Connect timeout, e.g. `10s` (`0` = no limit); the watches are long-lived, so no request time limit' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l standalone -d 'Run without leader election (one replica only; Kopf\'s flag of the same name). By default replicas elect a leader on a coordination.k8s.io/v1 Lease and only the leader handles objects'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -l skip-crd-check -d 'Do not check the CRD at start-up (for an operator that may not read CRDs)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -s A -l all-namespaces -d 'Watch all namespaces (one cluster-wide watch); beats -n, as in kubectl'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand operate" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l bundle -d 'Read evidence from a bundle directory instead of a cluster' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l interval -d 'Poll interval of `--watch` (only with it)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l operator -d 'The operator, as NAMESPACE/deployment/NAME (default: discovered)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l skew -d 'Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l log-file -d 'The operator\'s log, read from FILE beside the Pods\' logs (repeatable)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l resource -d 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server\'s discovery, or a bundle\'s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource\'s type names' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -s n -l namespace -d 'The namespace (default: the context\'s namespace; with --bundle, the whole bundle)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -s o -l output -d 'Output format: json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: a table; with NAME, sentences, and no wide); templates walk the -o json document: {.items[*].name}, not kubectl\'s {.items[*].metadata.name}' -r -f -a "json\t'JSON documents'
yaml\t'YAML documents'
wide\t'A wider table'
name\t'RESOURCE.GROUP/NAME per object'
jsonpath=\t'kubectl\'s JSONPath template, e.g. jsonpath=\'{.items[*].name}\''
jsonpath-as-json=\t'The template\'s values as JSON arrays'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l allow-missing-template-keys -d 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl\'s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl\'s `.items[*].metadata.name` finds no `metadata` there)' -r -f -a "true\t''
false\t''"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -s l -l selector -d 'Label selector, as kubectl\'s (`app=todo,tier!=db`)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l request-timeout -d 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l color -d 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR' -r -f -a "auto\t'Colour a terminal unless NO_COLOR is set and non-empty'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l exit-code -d 'Exit 1 when any shown object is stale, never-handled, invalid or terminating; without it `status` exits 0 whatever the verdicts, as `kubectl get` does (docs/contracts.md)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -s w -l watch -d 'After the table, print a row whenever an object\'s phase, generation or verdict changes'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l verbose -d 'With NAME: print the long form, every evidence line in full, as `-o json` holds it (the default form aggregates repeated events, cuts log lines to their message, fits one screen)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -s A -l all-namespaces -d 'All namespaces; beats -n, as in kubectl'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -l no-headers -d 'Do not print the table\'s headers'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand status" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l handler -d 'The handler id; `accept` also matches Kopf\'s field handler `accept/spec` (`accept/*`)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l log-file -d 'The operator\'s log, read from FILE (`-`: stdin; repeatable) beside the cluster\'s (or `--bundle`\'s) evidence, as `status` and `explain-events` read it: its clock is theirs (the Kopf operator\'s `TZ`, checked against the API server), and the answer names the operator and what ran since the spec changed. With `--local`, the files alone. With or without kubelet `--timestamps` prefixes' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l resource -d 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server\'s discovery, or a bundle\'s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource\'s type names' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l bundle -d 'Read the operator logs of a bundle directory (`operator/logs/POD.CONTAINER[.previous].log`)' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l operator -d 'The operator Deployment (default: the one the resolver decides for the object\'s namespace, among Deployments running `kopf run`, `python -m kopf` or `kubectl-microservice operate`); with `--bundle`, the bundle\'s Deployment whose logs are read' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -s c -l container -d 'The operator\'s container (default: the one running the operator)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l tail -d 'Read only the last N lines of each container log, as `kubectl logs --tail` (the kubelet\'s `tailLines`; -1: all). For the last N runs, see --last. (`--log-lines` is an old name of this flag.)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l since -d 'Only runs started within this long before now (`10m`, `1h`); with `--local`, "now" is the files\' last time (a file has no other clock)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l last -d 'Only the last N runs (after the other filters; not with --follow). For the last lines of each log, see --tail' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l cause -d 'Only runs with this cause (repeatable or comma-separated)' -r -f -a "create\t'Creation'
update\t'Updating (a spec change)'
resume\t'Resuming (operator restart)'
unknown\t'Not named in the logs'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l outcome -d 'Only runs with this outcome (repeatable or comma-separated)' -r -f -a "succeeded\t'The handler succeeded (or its error was ignored)'
retrying\t'A temporary failure: Kopf retries'
failed\t'A permanent failure, or retries exhausted'
unknown\t'No outcome logged'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l run-timeout -d 'A run with no outcome after this long is closed with outcome `unknown`' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -s n -l namespace -d 'Namespace of OBJECT, and of the operator read (default: the context\'s namespace, as every command; with --local or --bundle, a bare NAME matches in any namespace)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -s o -l output -d 'Output format: json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (json: one object per run, one per line; templates over each run\'s object); default: runs as text' -r -f -a "json\t'JSON documents'
yaml\t'YAML documents'
wide\t'A wider table'
name\t'RESOURCE.GROUP/NAME per object'
jsonpath=\t'kubectl\'s JSONPath template, e.g. jsonpath=\'{.items[*].name}\''
jsonpath-as-json=\t'The template\'s values as JSON arrays'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l allow-missing-template-keys -d 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl\'s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl\'s `.items[*].metadata.name` finds no `metadata` there)' -r -f -a "true\t''
false\t''"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l request-timeout -d 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l color -d 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR' -r -f -a "auto\t'Colour a terminal unless NO_COLOR is set and non-empty'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l local -d 'Read only the `--log-file` files (`-`: stdin), no cluster and no bundle, as `kubectl set --local` reads no API server: Kopf\'s zoneless times are read as UTC, said so, and no operator or spec change is named'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l previous -d 'Also read the container before its last restart (live; a bundle\'s `.previous.log` files are always read)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l raw -d 'Print the matching runs\' log lines as they are, without grouping'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -l verbose -d 'Print every run in full (the default prints runs of one object, handler, outcome and message that repeat as one line with their count, as kubectl aggregates events; `-o json` always holds every run)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -s f -l follow -d 'Keep following the logs; runs are printed as they end'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand logs" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l bundle -d 'Read evidence from a bundle directory instead of a cluster' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l operator -d 'The operator, as NAMESPACE/deployment/NAME (default: discovered)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l event-ttl -d 'The API server\'s event TTL (kube-apiserver `--event-ttl`): failures older than this have no events left' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l skew -d 'Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l log-file -d 'The operator\'s log, read from FILE beside the Pods\' logs (repeatable)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l resource -d 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server\'s discovery, or a bundle\'s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource\'s type names' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -s n -l namespace -d 'The Microservice\'s namespace (default: the context\'s namespace; with --bundle, the bundle\'s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -s o -l output -d 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: sentences); templates walk the -o json document: {.findings[*].id}' -r -f -a "json\t'JSON documents'
yaml\t'YAML documents'
wide\t'A wider table'
name\t'RESOURCE.GROUP/NAME per object'
jsonpath=\t'kubectl\'s JSONPath template, e.g. jsonpath=\'{.items[*].name}\''
jsonpath-as-json=\t'The template\'s values as JSON arrays'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l allow-missing-template-keys -d 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl\'s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl\'s `.items[*].metadata.name` finds no `metadata` there)' -r -f -a "true\t''
false\t''"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l request-timeout -d 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l color -d 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR' -r -f -a "auto\t'Colour a terminal unless NO_COLOR is set and non-empty'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -l verbose -d 'Print the long form: every evidence line in full, as `-o json` holds it (the default form aggregates repeated events, cuts log lines to their message and fits one screen)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand explain-events" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l operator -d 'The operator, as NAMESPACE/deployment/NAME (default: discovered)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l log-file -d 'The operator\'s log, read from FILE beside the Pods\' logs (repeatable)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l resource -d 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server\'s discovery, or a bundle\'s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource\'s type names' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -s n -l namespace -d 'The namespace to collect (default: the context\'s namespace)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -s l -l selector -d 'Label selector, as kubectl\'s (`app=todo,tier!=db`)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -l request-timeout -d 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -s A -l all-namespaces -d 'Collect all namespaces; beats -n, as in kubectl'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand collect" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l watch-namespace -d 'Namespace the operator watches (repeatable or comma-separated). Give this or `-A`' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l image -d 'Operator image' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l events -d '`--events` value written into the operator Deployment\'s args' -r -f -a "all\t'Normal `Accepted` and every Warning'
warnings\t'Warnings only (`ReconcileFailed`, `InvalidSpec`, `StatusPruned`)'
none\t'Post nothing; outcomes are only in the logs and in `status`'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -s n -l namespace -d 'The namespace the operator runs in (required)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -s o -l output -d 'Output format: yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: yaml; json: one v1 List)' -r -f -a "json\t'JSON documents'
yaml\t'YAML documents'
wide\t'A wider table'
name\t'RESOURCE.GROUP/NAME per object'
jsonpath=\t'kubectl\'s JSONPath template, e.g. jsonpath=\'{.items[*].name}\''
jsonpath-as-json=\t'The template\'s values as JSON arrays'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l allow-missing-template-keys -d 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl\'s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl\'s `.items[*].metadata.name` finds no `metadata` there)' -r -f -a "true\t''
false\t''"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l request-timeout -d 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l standalone -d 'One replica, `Recreate` strategy, `operate --standalone`'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l without-crd -d 'Leave out the CRD, and only the CRD: to install on a cluster that has it already (another team\'s, another operator\'s), leaving it as its owners keep it. Without this flag, when the cluster has the CRD with another schema, the CRD printed is the cluster\'s with this tool\'s added (nothing removed), and stderr says what it adds'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -l without-shared -d 'Leave out what every installation shares: the CRD (deleting it deletes every team\'s Microservices) and the ClusterRoles. What is left is this operator\'s own objects, for `kubectl delete -f -` to uninstall one team\'s operator'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -s A -l all-namespaces -d 'The operator watches all namespaces (cluster-wide RBAC), instead of --watch-namespace; -n still names the operator\'s own namespace'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand manifests" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)' -r -F
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -s n -l namespace -d 'Where to look for operators when Deployments cannot be listed cluster-wide (default: the context\'s namespace)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -s o -l output -d 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: text)' -r -f -a "json\t'JSON documents'
yaml\t'YAML documents'
wide\t'A wider table'
name\t'RESOURCE.GROUP/NAME per object'
jsonpath=\t'kubectl\'s JSONPath template, e.g. jsonpath=\'{.items[*].name}\''
jsonpath-as-json=\t'The template\'s values as JSON arrays'"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -l allow-missing-template-keys -d 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl\'s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl\'s `.items[*].metadata.name` finds no `metadata` there)' -r -f -a "true\t''
false\t''"
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -l request-timeout -d 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)' -r
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -l client -d 'Print the client\'s version only; do not ask the cluster'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand version" -s V -l version -d 'Print version'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "operate" -d 'Run the controller for Microservice objects (the `accept` handler)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "status" -d 'Is Accepted still true for the spec each Microservice has now?'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "logs" -d 'Every run of a handler, with its cause and outcome, from the operator\'s logs'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "explain-events" -d 'Why is there no Warning event on a Microservice?'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "collect" -d 'Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs)'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "manifests" -d 'Print the manifests that install the CRD, RBAC and the operator Deployment'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "version" -d 'Print the client\'s version and, from the cluster, its operators\' versions'
complete -c kubectl-microservice -n "__fish_kubectl_microservice_using_subcommand help; and not __fish_seen_subcommand_from operate status logs explain-events collect manifests completion version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
