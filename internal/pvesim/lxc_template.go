package pvesim

import "strconv"

// POST /nodes/{node}/lxc/{vmid}/template: converting a container into a template
// (pve-container src/PVE/API2/LXC.pm, template).

// handleLXCTemplate forks a vztemplate worker but answers null, as pve-container does: the
// client never sees the UPID and has to poll the config for template: 1.
func handleLXCTemplate(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if len(g.Snapshots) > 0 {
		return nil, errInternal("unable to create template, because CT contains snapshots")
	}
	if g.isTemplate() {
		return nil, errInternal("you can't convert a template to a template")
	}
	if g.running() {
		return nil, errInternal("you can't convert a CT to template if the CT is running")
	}
	s.startTask(r, taskDef{Type: "vztemplate", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(*task) error {
			s.makeTemplate(g)
			s.touch(g)
			return nil
		},
	})
	return nil, nil
}
