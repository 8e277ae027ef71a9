//! Building a run: the configuration resolved into machines, nodes, links, workload and fault
//! events, so that a run never fails on configuration once started.

use super::*;

impl<P: Protocol> Sim<P> {
    /// Builds a run. Every name the configuration uses (machines, nodes) is resolved here, so a
    /// run never fails on configuration once started.
    pub fn new(protocol: P, config: SimConfig, outputs: RunOutputs) -> Result<Sim<P>, FieldError> {
        config.validate()?;
        let fixed_nodes = protocol.fixed_nodes();
        let t = &config.topology;

        let mut machines: Vec<Machine> = Vec::new();
        let mut fixed = Vec::with_capacity(fixed_nodes.len());
        let mut names_seen = BTreeMap::new();
        for (i, f) in fixed_nodes.into_iter().enumerate() {
            assert!(names_seen.insert(f.name.clone(), i).is_none(), "protocol lists node {} twice", f.name);
            let machine = match machines.iter().position(|m| m.name == f.machine) {
                Some(m) => m,
                None => {
                    machines.push(Machine {
                        name: f.machine.clone(),
                        is_worker: false,
                        colocated: Vec::new(),
                        running: 0,
                        waiting: Default::default(),
                    });
                    machines.len() - 1
                }
            };
            machines[machine].is_worker |= f.hosts_workers;
            machines[machine].colocated.push(NodeId::fixed(i));
            let over = t.nodes.get(&f.name);
            let cores = over.and_then(|o| o.cores).unwrap_or(t.cores_per_node);
            fixed.push(FixedSlot {
                node: f.node,
                name: f.name,
                machine,
                cpu: Cpu::new(cores, t.service.clone()),
                service_override: over.and_then(|o| o.service.clone()),
                crashed: false,
                timers: Vec::new(),
            });
        }
        for name in t.nodes.keys() {
            if !names_seen.contains_key(name) {
                return Err(FieldError::new(
                    format!("topology.nodes.{name}"),
                    format!("no node named {name:?}; nodes are {}", list(fixed.iter().map(|f| &f.name))),
                ));
            }
        }
        let machine_index = |name: &str, path: String| -> Result<usize, FieldError> {
            machines.iter().position(|m| m.name == name).ok_or_else(|| {
                FieldError::new(path, format!("no machine named {name:?}; machines are {}", list(machines.iter().map(|m| &m.name))))
            })
        };

        let mut network = Network::new(machines.len(), fixed.len(), t.delay.clone(), t.local_delay.clone(), config.faults.loss_probability);
        // Later overrides win; `*` stands for every machine (pairs of different machines only).
        let all: Vec<usize> = (0..machines.len()).collect();
        for (i, l) in t.links.iter().enumerate() {
            let ends = |name: &String, field: &str| -> Result<Vec<usize>, FieldError> {
                if name == "*" { Ok(all.clone()) } else { Ok(vec![machine_index(name, format!("topology.links[{i}].{field}"))?]) }
            };
            let (froms, tos) = (ends(&l.from, "from")?, ends(&l.to, "to")?);
            for &a in &froms {
                for &b in &tos {
                    if a != b || (froms.len() == 1 && tos.len() == 1) {
                        network.set_override(a, b, l.delay.clone());
                        if l.both_ways {
                            network.set_override(b, a, l.delay.clone());
                        }
                    }
                }
            }
        }
        for (i, p) in config.faults.partitions.iter().enumerate() {
            let mut group_of = vec![None; machines.len()];
            for (g, group) in p.groups.iter().enumerate() {
                for (k, name) in group.iter().enumerate() {
                    let m = machine_index(name, format!("faults.partitions[{i}].groups[{g}][{k}]"))?;
                    if group_of[m].is_some() {
                        return Err(FieldError::new(
                            format!("faults.partitions[{i}].groups[{g}][{k}]"),
                            format!("machine {name:?} is in two groups"),
                        ));
                    }
                    group_of[m] = Some(g as u32);
                }
            }
            network.partitions.push(Partition {
                group_of,
                start_ns: p.start_ns,
                heal_ns: p.heal_ns,
                mode: p.mode,
                active: false,
                held: Vec::new(),
            });
        }
        for (i, c) in config.faults.crashes.iter().enumerate() {
            if !names_seen.contains_key(&c.node) {
                return Err(FieldError::new(
                    format!("faults.crashes[{i}].node"),
                    format!("no node named {:?}; nodes are {}", c.node, list(fixed.iter().map(|f| &f.name))),
                ));
            }
        }

        let workers: Vec<usize> = (0..machines.len()).filter(|&m| machines[m].is_worker).collect();
        if workers.is_empty() {
            return Err(FieldError::new("protocol", format!("protocol {} offers no worker machines", outputs.protocol)));
        }
        let (workload, key_names) = match &config.workload {
            WorkloadConfig::Script(sessions) => {
                let script = compile_script(sessions).map_err(|e| FieldError::new(format!("workload.script{}", e.path), e.message))?;
                for (s, session) in sessions.iter().enumerate() {
                    for (f, func) in session.functions.iter().enumerate() {
                        if let Some(on) = &func.on {
                            let path = format!("workload.script[{s}].functions[{f}].on");
                            let m = machine_index(on, path.clone())?;
                            if !machines[m].is_worker {
                                return Err(FieldError::new(path, format!("machine {on:?} runs no workers")));
                            }
                        }
                    }
                }
                (Workload::Script { plans: script.plans, started: 0 }, script.key_names)
            }
            WorkloadConfig::Generator(g) => {
                let generator = Generator::new(g.clone()).map_err(|e| e.within("workload.generator"))?;
                let clients = match g.arrival {
                    Arrival::Closed { clients, .. } => clients,
                    _ => 0,
                };
                (Workload::Generator { generator: Box::new(generator), started: 0, clients_active: clients, open_done: false }, Vec::new())
            }
        };

        let node_names: Vec<String> = fixed.iter().map(|f| f.name.clone()).collect();
        let replay = match &config.replay {
            Some(r) => {
                let sessions: Option<Vec<(String, usize)>> = match &config.workload {
                    WorkloadConfig::Script(s) => Some(s.iter().map(|x| (x.session.clone(), x.functions.len())).collect()),
                    WorkloadConfig::Generator(_) => None,
                };
                replay::check_names(r, &node_names, sessions.as_deref())?;
                Some(replay::Replay::new(r))
            }
            None => None,
        };
        let seed = config.seed;
        let placer = Placer::new(config.scheduler.policy, config.scheduler.migrate_probability, workers);
        Ok(Sim {
            protocol,
            service_by_kind: config.topology.service_by_kind.clone(),
            cost: config.topology.cost,
            config,
            now: 0,
            events: 0,
            queue: EventQueue::default(),
            fixed,
            functions: Vec::new(),
            free_function_slots: Vec::new(),
            machines_to_fill: Vec::new(),
            machines,
            placer,
            network,
            rng_network: RngStream::new(seed, StreamId::Network),
            rng_scheduler: RngStream::new(seed, StreamId::Scheduler),
            rng_workload: RngStream::new(seed, StreamId::Workload),
            rng_faults: RngStream::new(seed, StreamId::Faults),
            rng_service: RngStream::new(seed, StreamId::Service),
            rng_protocol: RngStream::new(seed, StreamId::Protocol),
            workload,
            workflows: IdTable::default(),
            next_workflow_id: 0,
            values: ValueAllocator::default(),
            timer_generation: 0,
            names: Names::new(&node_names, &key_names),
            history: outputs.history,
            trace: outputs.trace,
            next_record_id: 0,
            check_invariants: outputs.check_invariants,
            invariant_violation: None,
            scenario: outputs.scenario,
            protocol_name: outputs.protocol,
            metrics: RunMetrics::default(),
            spare_outboxes: Vec::new(),
            settling: false,
            last_progress: 0,
            stopped_by: None,
            io_error: None,
            replay,
        })
    }
}

fn list<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.map(|s| s.as_str()).collect();
    v.join(", ")
}
