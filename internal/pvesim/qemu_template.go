package pvesim

import "strconv"

// POST /nodes/{node}/qemu/{vmid}/template: converting a VM into a template
// (qemu-server src/PVE/API2/Qemu.pm, template).

// handleQemuTemplate refuses running VMs and VMs with snapshots synchronously.
func handleQemuTemplate(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if g.isTemplate() {
		return nil, errInternal("you can't convert a template to a template")
	}
	if g.running() {
		return nil, errInternal("you can't convert a VM to template if VM is running")
	}
	if len(g.Snapshots) > 0 {
		return nil, errInternal("unable to create template, because VM contains snapshots")
	}
	return s.startTask(r, taskDef{Type: "qmtemplate", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if g.running() {
				return errInternal("you can't convert a VM to template if VM is running")
			}
			s.makeTemplate(g)
			s.touch(g)
			return nil
		}}), nil
}
